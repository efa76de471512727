/**
 * `payloadPositions` against the REAL adapters: for generated histories (every corruption of
 * test/support/histories.ts, plus system messages anywhere, array contents, reasoning and audio kwargs), the
 * payload each adapter builds for every prefix of the history says where each message went: a prefix that adds
 * entries put the message there, one that adds none merged it into the last entry (or lifted it out).
 */
import fc from "fast-check";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { messageIndexAt, payloadPositions } from "../../src/models/positions";
import { brokenPlanArb, buildHistory, validPlanArb, type HistoryPlan } from "../support/histories";
import { payloadFor, type PayloadProvider, type ProviderPayload } from "../support/payloads";
import { boundaryError, errorOf, revokedArray, throwingAt, throwingObject } from "../support/hostile";

const RUNS = Math.ceil(Number(process.env.PROPERTY_RUNS ?? 1000) / 4);

type Dict = Record<string, unknown>;

function entriesOf(payload: ProviderPayload): Dict[] {
  switch (payload.provider) {
    case "openai":
      return payload.messages as Dict[];
    case "openai-responses":
      return payload.input as Dict[];
    case "anthropic":
      return payload.messages as Dict[];
    case "bedrock":
      return (payload.request.messages ?? []) as Dict[];
  }
}

/** Messages the generated histories lack: system messages anywhere, array contents, Responses reasoning, audio. */
type Extra = { op: "system" | "humanBlocks" | "reasoning" | "audio" | "toolBlocks"; at: number };
const extraArb: fc.Arbitrary<Extra> = fc.record({
  op: fc.constantFrom("system", "humanBlocks", "reasoning", "audio", "toolBlocks"),
  at: fc.nat(200),
});

function applyExtra(h: BaseMessage[], extra: Extra, serial: number): void {
  const at = extra.at % (h.length + 1);
  switch (extra.op) {
    case "system":
      h.splice(at, 0, new SystemMessage({ content: `note ${serial}`, id: `xs${serial}` }));
      return;
    case "humanBlocks":
      h.splice(
        at,
        0,
        new HumanMessage({
          content: [
            { type: "text", text: "a" },
            { type: "text", text: "b" },
          ],
          id: `xh${serial}`,
        }),
      );
      return;
    case "reasoning":
      h.splice(
        at,
        0,
        new AIMessage({
          content: "thought",
          id: `xr${serial}`,
          additional_kwargs: { reasoning: { id: `rs_${serial}`, type: "reasoning", summary: [] } },
        }),
      );
      return;
    case "audio":
      h.splice(
        at,
        0,
        new AIMessage({
          content: "spoken",
          id: `xa${serial}`,
          additional_kwargs: { audio: { id: `audio_${serial}` } },
        }),
      );
      return;
    case "toolBlocks": {
      // A result with array content (Anthropic keeps it out of the previous turn, then merges the turns).
      const tools = h.flatMap((m, i) => (ToolMessage.isInstance(m) ? [i] : []));
      if (tools.length === 0) return;
      const i = tools[extra.at % tools.length];
      const r = h[i] as ToolMessage;
      h[i] = new ToolMessage({
        content: [{ type: "text", text: `blocks ${serial}` }],
        tool_call_id: r.tool_call_id,
        id: r.id,
      });
      return;
    }
  }
}

const historyArb = fc
  .tuple(fc.oneof(brokenPlanArb, validPlanArb), fc.array(extraArb, { maxLength: 4 }))
  .map(([plan, extras]: [HistoryPlan, Extra[]]) => {
    const h = buildHistory(plan);
    extras.forEach((extra, serial) => applyExtra(h, extra, serial));
    return h;
  });

/** Where each message went, read off the real adapter's payloads for every prefix. Undefined when it throws. */
async function observedPositions(provider: PayloadProvider, h: BaseMessage[]) {
  const lengths: number[] = [];
  for (let n = 1; n <= h.length; n++) {
    try {
      lengths.push(entriesOf(await payloadFor(provider, h.slice(0, n))).length);
    } catch {
      return undefined;
    }
  }
  const full = entriesOf(await payloadFor(provider, h));
  return { lengths, full };
}

const PROVIDERS: PayloadProvider[] = ["openai", "openai-responses", "anthropic", "bedrock"];

describe("payloadPositions agrees with the real adapters", () => {
  for (const provider of PROVIDERS) {
    it(provider, async () => {
      let checked = 0;
      await fc.assert(
        fc.asyncProperty(historyArb, async (h) => {
          const observed = await observedPositions(provider, h);
          if (!observed) return; // the adapter refuses this history locally: there is no payload to point into
          checked++;
          const positions = payloadPositions(h, provider);
          expect(positions.messagesAt).toHaveLength(observed.full.length);
          let before = 0;
          h.forEach((message, i) => {
            const after = observed.lengths[i];
            if (after > before) {
              // New entries: the message starts the first of them and owns all of them.
              expect(positions.payloadIndex[i], `message ${i}`).toBe(before);
              for (let p = before; p < after; p++) expect(positions.messagesAt[p][0], `entry ${p}`).toBe(i);
            } else if (SystemMessage.isInstance(message) && positions.payloadIndex[i] === -1) {
              // Lifted into `system`.
            } else {
              // Merged into the last entry (or, on Responses, nothing sent).
              expect(positions.payloadIndex[i], `message ${i}`).toBe(provider === "openai-responses" ? -1 : after - 1);
            }
            before = after;
          });
          // A merged tool result sits at its block offset, and maps back from it.
          h.forEach((message, i) => {
            if (!ToolMessage.isInstance(message) || (provider !== "anthropic" && provider !== "bedrock")) return;
            const entry = observed.full[positions.payloadIndex[i]];
            const block = (entry.content as Dict[])[positions.blockOffset[i]];
            const id = provider === "anthropic" ? block.tool_use_id : (block.toolResult as Dict).toolUseId;
            expect(id).toBe(message.tool_call_id);
            expect(messageIndexAt(positions, positions.payloadIndex[i], positions.blockOffset[i])).toBe(i);
          });
        }),
        { numRuns: RUNS },
      );
      expect(checked).toBeGreaterThan(RUNS / 4);
    });
  }
});

describe("payloadPositions", () => {
  const h = [
    new SystemMessage("s"),
    new HumanMessage("q"),
    new AIMessage({
      content: "",
      tool_calls: [
        { id: "a", name: "f", args: {} },
        { id: "b", name: "f", args: {} },
      ],
    }),
    new ToolMessage({ content: "ra", tool_call_id: "a" }),
    new ToolMessage({ content: "rb", tool_call_id: "b" }),
    new HumanMessage("next"),
  ];

  it("Bedrock and Anthropic: system lifted out, results merged into one user turn with block offsets", () => {
    for (const format of ["bedrock", "anthropic"] as const) {
      const positions = payloadPositions(h, format);
      expect(positions.payloadIndex).toEqual([-1, 0, 1, 2, 2, 3]);
      expect(positions.blockOffset).toEqual([0, 0, 0, 0, 1, 0]);
      expect(messageIndexAt(positions, 2, 1)).toBe(4);
      expect(messageIndexAt(positions, 2)).toBe(3);
      expect(messageIndexAt(positions, 9)).toBeUndefined();
    }
  });

  it("Chat Completions: one entry per message; Responses: one item per call", () => {
    expect(payloadPositions(h, "openai").payloadIndex).toEqual([0, 1, 2, 3, 4, 5]);
    const responses = payloadPositions(h, "openai-responses");
    expect(responses.payloadIndex).toEqual([0, 1, 2, 5, 6, 7]);
    expect(messageIndexAt(responses, 4)).toBe(2);
  });

  it("reads plain message objects", () => {
    expect(
      payloadPositions(
        [
          { role: "user", content: "q" },
          { role: "assistant", content: "a" },
        ],
        "bedrock",
      ).payloadIndex,
    ).toEqual([0, 1]);
  });
});

describe("payloadPositions and messageIndexAt behind their boundaries", () => {
  const list = [new HumanMessage("q"), new AIMessage("a")];

  it("what they cannot read is their boundary's input error, naming the function", () => {
    expect(errorOf(() => payloadPositions(throwingAt(list, 1), "openai"))).toMatchObject(
      boundaryError("payloadPositions", "IDX"),
    );
    expect(errorOf(() => payloadPositions(revokedArray(), "openai"))).toMatchObject(boundaryError("payloadPositions"));
    expect(errorOf(() => payloadPositions(list, "gpt" as never))).toMatchObject(boundaryError("payloadPositions"));
    const positions = payloadPositions(list, "openai");
    expect(messageIndexAt(positions, 1)).toBe(1);
    expect(errorOf(() => messageIndexAt(undefined as never, 0))).toMatchObject(boundaryError("messageIndexAt"));
    expect(errorOf(() => messageIndexAt(throwingObject() as never, 0))).toMatchObject(
      boundaryError("messageIndexAt", "GETTER"),
    );
  });
});
