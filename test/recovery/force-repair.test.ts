import fc from "fast-check";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { findToolCallProblems } from "../../src/engine";
import { repairMarkerOf, isSyntheticResult } from "../../src/messages/inspect";
import { forceRepairToolCalls, REJECTION_DIAGNOSIS_KEY, rejectionDiagnosisOf } from "../../src/recovery/force-repair";
import { parseToolPairingError } from "../../src/recovery/parse-error";
import type { ProviderRejection, ToolCallRepair } from "../../src/types";
import { aiWithCalls, human, shape, toolResult } from "../support/builders";
import { brokenPlanArb, buildHistory, textOf } from "../support/histories";
import { ADAPTERS_PINNED, validatePayloadFor } from "../support/payloads";
import { boundaryError, errorOf, revokedObject, throwingObject } from "../support/hostile";

const rejection = (fields: Partial<ProviderRejection>): ProviderRejection => ({
  provider: "bedrock",
  kind: "missing_results",
  rule: "B1",
  toolCallIds: [],
  text: "Expected toolResult blocks at messages.2.content for the following Ids: a",
  ...fields,
});

describe("ids named: the named calls are answered afresh, even where the engine sees nothing wrong", () => {
  const valid = () => [
    human("q"),
    aiWithCalls("a", "b"),
    toolResult("a", "a".repeat(5000)),
    toolResult("b"),
    new AIMessage("done"),
    human("next"),
  ];

  it("replaces the named call's result, keeps its text as user text after the block, reports both with the rejection", () => {
    const history = valid();
    expect(findToolCallProblems(history, { provider: "openai" })).toEqual([]);
    const r = rejection({ provider: "openai", rule: "O1", toolCallIds: ["a"] });
    const seen: ToolCallRepair[] = [];
    const { messages, repairs } = forceRepairToolCalls(history, r, { onRepair: (x) => seen.push(x) });

    expect(shape(messages)).toBe("human, ai[a,b], tool(b), tool(a), human, ai, human");
    expect(isSyntheticResult(messages[3])).toBe(true);
    expect(repairMarkerOf(messages[3])).toMatchObject({
      synthetic: true,
      reason: "provider_rejection",
      toolCallId: "a",
    });
    expect(String(messages[3].content)).toContain("the provider rejected this exchange (O1)");
    expect(String(messages[4].content)).toContain("a".repeat(5000));
    expect(repairs).toEqual([
      expect.objectContaining({
        action: "synthesized_result",
        index: 1,
        toolCallId: "a",
        problem: "orphan_call",
        rejection: r,
      }),
      expect.objectContaining({ action: "converted_result", index: 2, toolCallId: "a", rejection: r }),
    ]);
    expect(seen).toEqual(repairs);
    expect(findToolCallProblems(messages, { provider: "openai" })).toEqual([]);
  });

  it("then satisfies the provider's rules: on Bedrock the user text after results gets its bridge turn", async () => {
    const { messages, repairs } = forceRepairToolCalls(valid(), rejection({ toolCallIds: ["a"] }));
    expect(await validatePayloadFor("bedrock", messages)).toEqual([]);
    expect(repairs.map((r) => r.action)).toContain("inserted_assistant_message");
    expect(repairs.every((r) => r.rejection?.rule === "B1")).toBe(true);
  });

  it('orphanCalls: "remove" removes only the named calls, from every location, and keeps the assistant\'s text', () => {
    const caller = new AIMessage({
      content: [
        { type: "text", text: "checking two things" },
        { type: "tool_use", id: "a", name: "f", input: {} },
      ],
      tool_calls: [
        { id: "a", name: "f", args: {} },
        { id: "b", name: "g", args: {} },
      ],
      response_metadata: {
        output: [
          { type: "function_call", id: "fc_1", call_id: "a", name: "f", arguments: "{}" },
          { type: "function_call", id: "fc_2", call_id: "b", name: "g", arguments: "{}" },
        ],
      },
    });
    const { messages } = forceRepairToolCalls(
      [human("q"), caller, toolResult("a"), toolResult("b"), human("next")],
      rejection({ toolCallIds: ["a"] }),
      { orphanCalls: "remove", provider: "openai" },
    );
    const kept = messages[1] as AIMessage;
    expect(kept.tool_calls?.map((c) => c.id)).toEqual(["b"]);
    expect(kept.content).toEqual([{ type: "text", text: "checking two things" }]);
    expect((kept.response_metadata.output as { call_id: string }[]).map((o) => o.call_id)).toEqual(["b"]);
    expect(shape(messages)).toBe("human, ai[b], tool(b), human, human");
    expect(textOf(messages[3])).toContain("result of a");
  });

  it("an id of any length, read from the provider's text, names its call", () => {
    const long = `call_${"x".repeat(3000)}`;
    const history = [human("q"), aiWithCalls(long), human("next")];
    const parsed = parseToolPairingError(
      `Expected toolResult blocks at messages.1.content for the following Ids: ${long}`,
    )!;
    expect(parsed.toolCallIds).toEqual([long]);
    const { repairs } = forceRepairToolCalls(history, parsed, { provider: "openai" });
    expect(repairs.filter((r) => r.action === "synthesized_result").map((r) => r.toolCallId)).toEqual([long]);
  });

  it("a Responses item id (R5) names the call it carries", () => {
    const caller = new AIMessage({
      content: "",
      tool_calls: [{ id: "call_a", name: "f", args: {} }],
      response_metadata: {
        output: [{ type: "function_call", id: "fc_dup", call_id: "call_a", name: "f", arguments: "{}" }],
      },
    });
    const r = parseToolPairingError(
      "Duplicate item found with id fc_dup. Remove duplicate items from your input and try again.",
    )!;
    const { repairs } = forceRepairToolCalls([human("q"), caller, toolResult("call_a"), human("x")], r);
    expect(repairs.filter((x) => x.toolCallId === "call_a").map((x) => x.action)).toEqual([
      "synthesized_result",
      "converted_result",
    ]);
  });

  it("a named id that only has results: they are set aside as user text", () => {
    const { messages } = forceRepairToolCalls(
      [human("q"), new AIMessage("hi"), toolResult("ghost"), human("x")],
      rejection({ provider: "anthropic", rule: "A2", kind: "unexpected_results", toolCallIds: ["ghost"] }),
    );
    expect(messages.some((m) => ToolMessage.isInstance(m))).toBe(false);
    expect(messages.map(textOf).join("\n")).toContain("result of ghost");
  });
});

it("reports every repair at a message index, also one the engine made past the end of the input", () => {
  const unanswered = new AIMessage({
    content: [{ type: "thinking", thinking: "hm", signature: "s" }],
    tool_calls: [{ id: "a", name: "t", args: {} }],
  });
  const r = rejection({ provider: "anthropic", kind: "roles_must_alternate", rule: "A7", text: "x" });
  const { repairs } = forceRepairToolCalls([human("q"), unanswered], r);
  expect(repairs.length).toBeGreaterThan(0);
  for (const repair of repairs) expect(repair.index, JSON.stringify(repair)).toEqual(expect.any(Number));
});

describe("syntheticResultText: the user's text, or ours when it fails", () => {
  const history = () => [human("q"), aiWithCalls("a"), toolResult("a", "real output")];
  const named = rejection({ provider: "openai", rule: "O1", toolCallIds: ["a"] });
  const textOfSynthetic = (messages: BaseMessage[]) => String(messages.find(isSyntheticResult)?.content);

  it("uses the text the user's function gives", () => {
    const { messages } = forceRepairToolCalls(history(), named, { syntheticResultText: ({ id }) => `custom ${id}` });
    expect(textOfSynthetic(messages)).toBe("custom a");
  });

  for (const [what, text] of [
    [
      "throws",
      () => {
        throw new Error("boom");
      },
    ],
    ["returns an empty string", () => ""],
  ] as const) {
    it(`falls back to its own text when the function ${what}`, () => {
      const { messages } = forceRepairToolCalls(history(), named, { syntheticResultText: text });
      expect(textOfSynthetic(messages)).toContain("its result was set aside");
    });
  }
});

describe("no ids named: the strictest profile, around messageIndex first", () => {
  // A history repaired for OpenAI keeps ids Bedrock refuses (B4 names a position, not the id).
  const history = () => [
    new SystemMessage("s"),
    human("first"),
    aiWithCalls("functions.lookup:0"),
    toolResult("functions.lookup:0"),
    new AIMessage("one"),
    human("second"),
    aiWithCalls("functions.lookup:1"),
    toolResult("functions.lookup:1"),
    new AIMessage("two"),
    human("third"),
  ];
  const b4 =
    "Value at 'messages.5.member.content.0.member.toolUse.toolUseId' failed to satisfy constraint: " +
    "Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+";

  it("renames only in the named turn when that is enough, then checks the whole history for the provider", () => {
    const h = history();
    const r = parseToolPairingError(b4, { messages: h, provider: "bedrock" })!;
    expect(r).toMatchObject({ kind: "invalid_id", payloadIndex: 5, messageIndex: 6 });
    const { messages, repairs } = forceRepairToolCalls(h, r);
    expect(repairs[0]).toMatchObject({
      action: "renamed_call_id",
      index: 6,
      toolCallId: "functions.lookup:1",
      rejection: r,
    });
    // The final pass for Bedrock renames the other one too: the result is valid, not just less wrong.
    expect(repairs.map((x) => [x.action, x.index, x.toolCallId])).toEqual([
      ["renamed_call_id", 6, "functions.lookup:1"],
      ["renamed_call_id", 2, "functions.lookup:0"],
    ]);
    expect(findToolCallProblems(messages, { provider: "bedrock" })).toEqual([]);
  });

  it("without a messageIndex, the whole history", () => {
    const { repairs } = forceRepairToolCalls(history(), parseToolPairingError(b4)!, { provider: "strict" });
    expect(repairs.filter((x) => x.action === "renamed_call_id")).toHaveLength(2);
  });

  it("nothing to change: the same array and no repairs (no retry will be made)", () => {
    const h = [human("q"), new AIMessage("answer")];
    const prefill = parseToolPairingError(
      "This model does not support assistant message prefill. The conversation must end with a user message.",
    )!;
    const result = forceRepairToolCalls(h, prefill, { provider: "anthropic", trailing: "keep" });
    expect(result.messages).toBe(h);
    expect(result.repairs).toEqual([]);
  });
});

describe("input", () => {
  it("refuses what is not a list or not a rejection, and reads plain message objects", () => {
    expect(() => forceRepairToolCalls("x" as never, rejection({}))).toThrow(TypeError);
    expect(() => forceRepairToolCalls([], {} as never)).toThrow(TypeError);
    const { messages, repairs } = forceRepairToolCalls(
      [
        { role: "user", content: "q" },
        { role: "assistant", content: "", tool_calls: [{ id: "a", name: "f", args: {} }] },
        { role: "tool", tool_call_id: "a", content: "r" },
      ] as unknown[],
      rejection({ toolCallIds: ["a"] }),
    );
    expect(repairs[0]).toMatchObject({ action: "coerced_message", index: 0 });
    expect(messages.every((m) => (m as BaseMessage).getType !== undefined)).toBe(true);
  });

  it("a throwing onRepair neither fails nor undoes the forced repair (as in repairToolCalls)", () => {
    const h = [human("q"), aiWithCalls("call_a"), human("next")];
    const parsed = parseToolPairingError(
      new Error(
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each " +
          "'tool_call_id'. The following tool_call_ids did not have response messages: call_a",
      ),
    )!;
    expect(parsed.toolCallIds).toEqual(["call_a"]);
    let calls = 0;
    const result = forceRepairToolCalls(h, parsed, {
      onRepair: () => {
        calls++;
        throw new Error("reporter down");
      },
    });
    expect(result.repairs.length).toBeGreaterThan(0);
    expect(calls).toBe(result.repairs.length);
    expect(findToolCallProblems(result.messages, { provider: "openai" })).toEqual([]);
  });
});

describe("tool blocks in a request without tools (tool_config_missing, B3)", () => {
  const b3 = rejection({
    kind: "tool_config_missing",
    rule: "B3",
    text: "The toolConfig field must be defined when using toolUse and toolResult content blocks.",
  });
  const valid = () => [
    human("q"),
    aiWithCalls("a"),
    toolResult("a", "the answer"),
    new AIMessage("done"),
    human("summarize"),
  ];

  it("names a provider option that is not one (before any profile is read); a rejecting provider it does not know is strict", () => {
    expect(() => forceRepairToolCalls(valid(), b3, { provider: "bogus" as never })).toThrow(
      expect.objectContaining({ name: "ToolCallRepairInputError", argument: "options.provider" }),
    );
    for (const rejection of [undefined, null, {}])
      expect(() => forceRepairToolCalls(valid(), rejection as never)).toThrow(
        expect.objectContaining({ name: "ToolCallRepairInputError", argument: "rejection" }),
      );
    const { messages } = forceRepairToolCalls(valid(), { ...b3, provider: "mistral" as never });
    expect(shape(messages)).toBe("human, ai, human, ai, human");
  });

  it(
    "a valid history: every call and result turned into text, so the unbound request is accepted; " +
      "repairs carry the rejection",
    async () => {
      const history = valid();
      expect(await validatePayloadFor("bedrock", history, { tools: [] })).toEqual([
        expect.objectContaining({ rule: "B3" }),
      ]);
      const { messages, repairs } = forceRepairToolCalls(history, b3);
      expect(shape(messages)).toBe("human, ai, human, ai, human");
      expect(messages.map(textOf).join("\n")).toContain("the answer");
      expect(await validatePayloadFor("bedrock", messages, { tools: [] })).toEqual([]);
      expect(repairs.filter((r) => r.action === "converted_to_text").map((r) => r.index)).toEqual([1, 2]);
      expect(repairs.every((r) => r.rejection === b3)).toBe(true);
    },
  );

  it("a provider that takes tool blocks without tools yields to the rejecting one (Bedrock)", async () => {
    const { messages } = forceRepairToolCalls(valid(), b3, { provider: "openai" });
    expect(await validatePayloadFor("bedrock", messages, { tools: [] })).toEqual([]);
  });

  it("at the structural level (what a surface persists) nothing is converted: storage keeps the tool blocks", () => {
    const history = valid();
    const { messages, repairs } = forceRepairToolCalls(history, b3, { level: "structural" });
    expect(repairs).toEqual([]);
    expect(messages).toBe(history);
  });
});

describe("properties over generated broken histories", () => {
  const RUNS = Math.ceil(Number(process.env.PROPERTY_RUNS ?? 1000) / 5);
  const asRequest = (h: BaseMessage[]) => [...h, new HumanMessage({ content: "next question", id: "next" })];

  it.skipIf(ADAPTERS_PINNED !== undefined)(
    "whatever ids are named, the result is valid for the provider and no tool output is lost",
    async () => {
      await fc.assert(
        fc.asyncProperty(
          brokenPlanArb,
          fc.nat(),
          fc.constantFrom("bedrock", "openai", "anthropic" as const),
          fc.boolean(),
          async (plan, pick, provider, remove) => {
            const h = asRequest(buildHistory(plan));
            const ids = h.flatMap((m) =>
              ToolMessage.isInstance(m)
                ? [m.tool_call_id]
                : AIMessage.isInstance(m)
                  ? (m.tool_calls ?? []).map((c) => c.id!)
                  : [],
            );
            const named = ids.length ? [ids[pick % ids.length]] : [];
            const { messages } = forceRepairToolCalls(
              h,
              rejection({ provider, toolCallIds: named }),
              remove ? { orphanCalls: "remove" } : {},
            );
            expect(await validatePayloadFor(provider, messages)).toEqual([]);
            const after = messages.map(textOf).join("\n");
            for (const m of h) if (ToolMessage.isInstance(m) && textOf(m).trim()) expect(after).toContain(textOf(m));
          },
        ),
        { numRuns: RUNS },
      );
    },
  );
});

describe("forceRepairToolCalls: a rejection or options that cannot be read are its boundary's input error", () => {
  const rejection = parseToolPairingError(new Error("No tool output found for function call call_a."))!;

  it("a rejection or options whose getters throw are input errors naming the function", () => {
    const history = [human(), aiWithCalls("call_a"), human("next")];
    expect(errorOf(() => forceRepairToolCalls(history, throwingObject() as never))).toMatchObject(
      boundaryError("forceRepairToolCalls", "GETTER"),
    );
    expect(
      errorOf(() =>
        forceRepairToolCalls(history, {
          ...rejection,
          get toolCallIds(): string[] {
            throw new Error("x");
          },
        }),
      ),
    ).toMatchObject(boundaryError("forceRepairToolCalls", "x"));
    expect(errorOf(() => forceRepairToolCalls(history, rejection, throwingObject() as never))).toMatchObject(
      boundaryError("forceRepairToolCalls"),
    );
    expect(
      errorOf(() =>
        forceRepairToolCalls(history, rejection, {
          get provider(): string {
            throw new Error("y");
          },
        } as never),
      ),
    ).toMatchObject(boundaryError("forceRepairToolCalls", "y"));
    expect(forceRepairToolCalls(history, rejection).repairs.length).toBeGreaterThan(0);
  });
});

describe("rejectionDiagnosisOf", () => {
  it("reads the diagnosis a surface attached, and takes any value (like parseToolPairingError)", () => {
    const diagnosis = { rejection: {}, repairs: [], retried: false };
    expect(rejectionDiagnosisOf(Object.assign(new Error("x"), { [REJECTION_DIAGNOSIS_KEY]: diagnosis }))).toBe(
      diagnosis,
    );
    for (const value of [null, undefined, 42, "x", new Error("plain"), throwingObject(), revokedObject()])
      expect(rejectionDiagnosisOf(value)).toBeUndefined();
  });
});
