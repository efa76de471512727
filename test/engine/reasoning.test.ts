/**
 * Threads of models with thinking on, as ChatAnthropic and ChatBedrockConverse store them (signed `thinking` /
 * `reasoning` blocks, cut streams, server tools), with the usual incidents on top: after repair the REAL adapter's
 * payload satisfies the provider's rules with thinking on and off (A10, A13, A14, B11, B12 included), no reasoning
 * or server tool output is lost, and a second repair changes nothing.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { findToolCallProblems, repairToolCalls } from "../../src/engine";
import { forceRepairToolCalls } from "../../src/recovery/force-repair";
import { parseToolPairingError } from "../../src/recovery/parse-error";
import { isSyntheticResult } from "../../src/messages/inspect";
import { ADAPTERS_PINNED, validatePayloadFor } from "../support/payloads";
import { buildHistory, reasoningPlanArb, textOf, type ReasoningShape } from "../support/histories";

const withAdapters = it.skipIf(ADAPTERS_PINNED !== undefined);
const RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);

type Dict = Record<string, unknown>;
const SHAPES: { shape: ReasoningShape; provider: "anthropic" | "bedrock" }[] = [
  { shape: "thinking", provider: "anthropic" },
  { shape: "reasoning", provider: "bedrock" },
];

/** Every piece of reasoning text and server tool output a history holds (what must survive, as a block or as text). */
function keptWords(messages: BaseMessage[]): string[] {
  const words: string[] = [];
  for (const m of messages) {
    if (!AIMessage.isInstance(m) || !Array.isArray(m.content)) continue;
    for (const block of m.content as Dict[]) {
      if (block.type === "thinking" && typeof block.thinking === "string" && block.thinking !== "")
        words.push(block.thinking);
      if (block.type === "reasoning" && typeof block.reasoning === "string" && block.reasoning !== "")
        words.push(block.reasoning);
      if (block.type === "web_fetch_tool_result") words.push(`page text`);
      if (block.type === "code_execution_tool_result") words.push(`printed`);
    }
  }
  return words;
}

/** All words of a history, blocks included (reasoning kept as a block counts as kept). */
const allWords = (messages: BaseMessage[]) => messages.map((m) => JSON.stringify(m.content)).join("\n");

/** Whether the block is reasoning a thinking model put first in its message. */
const isReasoning = (block: unknown) =>
  ["thinking", "redacted_thinking", "reasoning"].includes(String((block as Dict | undefined)?.type));

/**
 * The case the repair does not guess at (provider-rules.md, "The open tool loop, as the repair sees it"): the loop the
 * request is sent inside starts after a user message that follows an assistant message, and its first call has no
 * reasoning. With thinking on, the call was made with thinking off, or the turn's reasoning is gone; with a steer that
 * followed a cut stream, the repair cannot tell it from a new question after an answer, and leaves it.
 */
function loopOpensWithoutReasoning(messages: BaseMessage[]): boolean {
  let start = -1;
  let turnBefore: string | undefined;
  messages.forEach((m, i) => {
    if (HumanMessage.isInstance(m) && turnBefore === "ai") start = i;
    if (!HumanMessage.isInstance(m) && !SystemMessage.isInstance(m)) turnBefore = m.getType();
  });
  const anchor = messages.slice(start + 1).find((m) => AIMessage.isInstance(m) && (m.tool_calls ?? []).length > 0);
  return anchor !== undefined && !(Array.isArray(anchor.content) && isReasoning(anchor.content[0]));
}

/**
 * The request is valid; or, with thinking on, it is the case above, rejected for it alone (A10, B11), and the one retry
 * every surface makes (`forceRepairToolCalls` on the parsed rejection) sends a valid request.
 */
async function expectValidOrRecovered(provider: "anthropic" | "bedrock", messages: BaseMessage[], thinking: boolean) {
  const options = { thinking, noPrefill: false };
  const problems = await validatePayloadFor(provider, messages, options);
  if (problems.length === 0) return;
  const rule = provider === "bedrock" ? "B11" : "A10";
  expect({ problems, undecided: thinking && loopOpensWithoutReasoning(messages) }).toEqual({
    problems: problems.map(() => expect.objectContaining({ rule })),
    undecided: true,
  });
  const rejection = parseToolPairingError(new Error(problems[0].message), { provider });
  expect(rejection?.kind).toBe("thinking_block_required");
  const retried = forceRepairToolCalls(messages, rejection!, { provider });
  expect(await validatePayloadFor(provider, retried.messages, options)).toEqual([]);
}

describe("threads with thinking on: valid through the real adapters, thinking on and off", () => {
  for (const { shape, provider } of SHAPES) {
    for (const thinking of [true, false]) {
      withAdapters(`${provider} (${shape} blocks), thinking ${thinking ? "on" : "off"}`, async () => {
        await fc.assert(
          fc.asyncProperty(reasoningPlanArb(shape), async (plan) => {
            const h = buildHistory(plan);
            // A history trimmed to its system prompt is no conversation (B5 says so whatever the repair does).
            fc.pre(h.some((m) => !SystemMessage.isInstance(m)));
            const { messages } = repairToolCalls(h, { provider });
            // Prefill (A8, B7) is not this test's concern: a request inside the loop ends on tool results.
            await expectValidOrRecovered(provider, messages, thinking);
            expect(findToolCallProblems(messages, { provider })).toEqual([]);
          }),
          { numRuns: Math.ceil(RUNS / 2) },
        );
      });
    }
  }
});

/**
 * Found by the property above (seeds -1507191582 and -1451317636): on Bedrock, a steer inside the loop, a stream cut
 * mid-thought after it, another steer, then the loop's next call without reasoning. The second steer follows an
 * assistant message, so the repair reads it as a new turn (it cannot tell it from a new question: moving it would
 * put the model's answer before the question when thinking was off), and Bedrock with thinking on refuses the loop it
 * opens (B11). The one retry writes that loop out as text, and every steer still reaches the model.
 */
const STEERED_AROUND_A_CUT_STREAM = [
  [
    { calls: 3, order: 0, text: false },
    { calls: 1, order: 0, text: false },
  ],
  [
    { op: "orphanResult", at: 0 },
    { op: "insertHuman", at: 192 },
    { op: "unsignedThinking", at: 40, shape: "reasoning" },
    { op: "insertHuman", at: 17 },
    { op: "dropResult", at: 0 },
  ],
  [
    { calls: 2, order: 0, text: false },
    { calls: 1, order: 0, text: false },
  ],
  [
    { op: "insertHuman", at: 58 },
    { op: "insertHuman", at: 146 },
    { op: "insertHuman", at: 0 },
    { op: "unsignedThinking", at: 12, shape: "reasoning" },
  ],
];
for (let k = 0; k < STEERED_AROUND_A_CUT_STREAM.length; k += 2) {
  withAdapters(
    `Bedrock, thinking on: steers around a cut stream inside the loop (case ${k / 2 + 1}), recovered in one retry`,
    async () => {
      const plan = {
        system: false,
        reasoning: "reasoning",
        openLoop: true,
        turns: [{ exchanges: STEERED_AROUND_A_CUT_STREAM[k], final: false }],
        corruptions: STEERED_AROUND_A_CUT_STREAM[k + 1],
      };
      const h = buildHistory(plan as never);
      const { messages } = repairToolCalls(h, { provider: "bedrock" });
      // Valid with thinking off, as it stands: nothing was moved on a guess.
      expect(await validatePayloadFor("bedrock", messages, { thinking: false, noPrefill: false })).toEqual([]);
      expect(loopOpensWithoutReasoning(messages)).toBe(true);
      await expectValidOrRecovered("bedrock", messages, true);
      const steers = h.map(textOf).filter((text) => text.startsWith("steering message"));
      for (const steer of steers) expect(allWords(messages)).toContain(steer);
    },
  );
}

describe("threads with thinking on: lossless and idempotent", () => {
  for (const { shape, provider } of SHAPES) {
    it(`${provider}: every reasoning text, server tool output, user message and real result is still there`, () => {
      fc.assert(
        fc.property(reasoningPlanArb(shape), (plan) => {
          const h = buildHistory(plan);
          const out = repairToolCalls(h, { provider }).messages;
          const kept = allWords(out);
          for (const word of keptWords(h)) expect(kept.includes(word), `lost ${JSON.stringify(word)}`).toBe(true);
          for (const m of h) {
            if (!(HumanMessage.isInstance(m) || (ToolMessage.isInstance(m) && !isSyntheticResult(m)))) continue;
            const text = textOf(m);
            if (text.trim() !== "")
              expect(kept.includes(JSON.stringify(text).slice(1, -1)), `lost ${JSON.stringify(text)}`).toBe(true);
          }
        }),
        { numRuns: RUNS },
      );
    });

    it(`${provider}: repairing a repaired thread changes nothing`, () => {
      fc.assert(
        fc.property(reasoningPlanArb(shape), (plan) => {
          const once = repairToolCalls(buildHistory(plan), { provider });
          const twice = repairToolCalls(once.messages, { provider });
          expect(twice.repairs).toEqual([]);
          expect(twice.messages).toBe(once.messages);
        }),
        { numRuns: RUNS },
      );
    });
  }
});
