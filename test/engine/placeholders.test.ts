/**
 * What a placeholder says (issue 30, issue 32): another library's placeholder (deepagents' patch middleware) is no
 * result, told in the package's honest words, at the structural level too; a real result beats it; the tools named
 * in `readOnlyTools` get a placeholder that says they can simply be called again.
 */
import { ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { createRepairer, findToolCallProblems, repairToolCalls } from "../../src/engine";
import { FOREIGN_PLACEHOLDERS, isNoResult, repairMarkerOf } from "../../src/messages/inspect";
import { aiWithCalls, human, shape, toolResult } from "../support/builders";

/** deepagents' text (JS `patchDanglingToolCalls`, Python `PatchToolCallsMiddleware`), as it writes it. */
const deepagentsText = (name: string, id: string) =>
  `Tool call ${name} with id ${id} was cancelled - another message came in before it could be completed.`;
const deepagentsPlaceholder = (name: string, id: string) =>
  new ToolMessage({ content: deepagentsText(name, id), name, tool_call_id: id });

describe("another library's placeholder", () => {
  const history = () => [
    human("book it"),
    aiWithCalls("a", "b"),
    toolResult("a"),
    deepagentsPlaceholder("tool_b", "b"),
    human("and now?"),
  ];

  it("the table holds deepagents' exact text, anchored at both ends on the call's id", () => {
    expect(FOREIGN_PLACEHOLDERS.map(([library]) => library)).toEqual(["deepagents"]);
    expect(isNoResult(deepagentsPlaceholder("task", "call_1"))).toBe(true);
    // Another id, words before or after, another call's text: a real result.
    for (const content of [
      deepagentsText("task", "call_2"),
      `Note: ${deepagentsText("task", "call_1")}`,
      `${deepagentsText("task", "call_1")} Retry later.`,
    ])
      expect(isNoResult(new ToolMessage({ content, tool_call_id: "call_1" }))).toBe(false);
  });

  for (const level of ["request", "structural"] as const)
    it(`is reworded in the package's words, marked and reported (${level} level)`, () => {
      const input = history();
      expect(createRepairer({ level, provider: "openai" }).isClean(input)).toBe(false);
      expect(findToolCallProblems(input, { level, provider: "openai" })).toEqual([
        expect.objectContaining({ kind: "orphan_call", index: 1, toolCallId: "b" }),
      ]);
      const { messages, repairs } = repairToolCalls(input, { level, provider: "openai" });
      expect(shape(messages)).toBe(shape(input));
      const reworded = messages[3] as ToolMessage;
      expect(reworded.tool_call_id).toBe("b");
      // A history alone cannot say why: "no result was recorded", never "cancelled", never "did not run".
      expect(reworded.content).toBe(
        'Tool "tool_b" (call b) has no result: no result was recorded for it. It may have started, and may have ' +
          "taken effect; its outcome is unknown. Do not call it again without first checking whether it already took effect.",
      );
      expect(repairMarkerOf(reworded)).toMatchObject({ synthetic: true, toolCallId: "b", toolRun: "outcome_unknown" });
      expect(repairs).toEqual([
        expect.objectContaining({ problem: "orphan_call", action: "synthesized_result", index: 3, toolCallId: "b" }),
      ]);
      // The real result and everything else are the very same objects.
      expect(messages[2]).toBe(input[2]);
      expect(createRepairer({ level, provider: "openai" }).isClean(messages)).toBe(true);
    });

  it("a real result of the same call beats it: the placeholder goes", () => {
    const input = [human(), aiWithCalls("b"), deepagentsPlaceholder("tool_b", "b"), toolResult("b", "the booking")];
    const { messages } = repairToolCalls(input, { provider: "bedrock" });
    expect(shape(messages)).toBe("human, ai[b], tool(b)");
    expect(messages[2].content).toBe("the booking");
  });
});

describe("readOnlyTools", () => {
  it("a read-only call's placeholder says it can simply be called again; the others' say check first", () => {
    const input = [human(), aiWithCalls("a", "b"), human("next")];
    const { messages } = repairToolCalls(input, { readOnlyTools: ["tool_a"] });
    expect(messages[2].content).toMatch(
      /^Tool "tool_a" \(call a\) has no result: .* It is read-only, so it can simply/,
    );
    expect(messages[3].content).toMatch(
      /Do not call it again without first checking whether it already took effect\.$/,
    );
  });

  it("the user's own text is told which tool is read-only", () => {
    const seen: unknown[] = [];
    repairToolCalls([human(), aiWithCalls("a", "b"), human("next")], {
      readOnlyTools: ["tool_a"],
      syntheticResultText: (call) => {
        seen.push([call.name, call.readOnly]);
        return "no result";
      },
    });
    expect(seen).toEqual([
      ["tool_a", true],
      ["tool_b", false],
    ]);
  });

  it("is refused unless it is a list of names", () => {
    expect(() => repairToolCalls([], { readOnlyTools: "tool_a" as never })).toThrow(
      /options\.readOnlyTools is .*; expected an array of non-empty strings/,
    );
  });
});
