import { describe, expect, it } from "vitest";
import type { BaseMessage } from "@langchain/core/messages";
import { diffMessages, renderDiff, shortText } from "../../src/cli/render";
import { repairToolCalls } from "../../src/engine";
import { syntheticToolResult } from "../../src/messages/build";
import { TOOL_RUN_STATES } from "../../src/types";
import type { ThreadRepairReport } from "../../src/threads/repair";
import { ai, aiWithCalls, human, toolResult } from "../support/builders";

const marks = (before: BaseMessage[], after: BaseMessage[]) =>
  diffMessages(before, after)
    .map((l) => `${l.mark}${l.index}`)
    .join(" ");

describe("diffMessages", () => {
  it("follows identity: kept, added, removed", () => {
    const [a, b, c, d] = [human("a"), ai("b"), human("c"), ai("d")];
    expect(marks([a, b, c], [a, b, c])).toBe(" 0  1  2");
    expect(marks([a, c], [a, b, c])).toBe(" 0 +1  2");
    expect(marks([a, b, c], [a, c])).toBe(" 0 -1  1");
    expect(marks([a, b, c], [a, d, c])).toBe(" 0 -1 +1  2");
  });

  it("a moved message shows where it left and where it landed", () => {
    const [a, b, c] = [human("a"), ai("b"), human("c")];
    expect(marks([a, b, c], [a, c, b])).toBe(" 0 -1  1 +2");
  });

  it("renders a repair with the new results marked and unchanged stretches folded", () => {
    const before = [
      human("one"),
      ai("two"),
      human("three"),
      ai("four"),
      human("five"),
      aiWithCalls("x", "y"),
      toolResult("x"),
      human("next"),
    ];
    const { messages: after } = repairToolCalls(before, { provider: "openai" });
    const report = {
      threadId: "t",
      namespace: "",
      status: "would_repair",
      found: "broken",
      problems: [],
      structural: 1,
      repairs: [],
      reshape: [],
      salvaged: [],
      before,
      after,
    } as ThreadRepairReport;
    const lines = renderDiff(report);
    expect(lines[0]).toBe("      … 5 unchanged messages");
    expect(lines[1]).toMatch(/^ {4} +5 ai +\S+ +calls tool_x\(x\), tool_y\(y\)$/);
    expect(
      lines.some((l) =>
        /^ {2}\+ +7 tool +\S+ +answers y tool_y: ".*" +\[placeholder: the tool's outcome is unknown\]$/.test(l),
      ),
    ).toBe(true);
    expect(lines.at(-1)).toMatch(/^ {4} +8 human .* "next"$/);
  });

  it("labels each placeholder with what its marker knows of the run, never more", () => {
    const call = aiWithCalls("a");
    const label = (toolRun: (typeof TOOL_RUN_STATES)[number]) => {
      const placeholder = syntheticToolResult({ toolCallId: "a", toolName: "tool_a", reason: "r", text: "t", toolRun });
      const report = { before: [call], after: [call, placeholder], salvaged: [] } as unknown as ThreadRepairReport;
      return /\[placeholder: (.*)\]$/.exec(renderDiff(report).at(-1) ?? "")?.[1];
    };
    expect(Object.fromEntries(TOOL_RUN_STATES.map((run) => [run, label(run)]))).toEqual({
      never_started: "the tool never started",
      outcome_unknown: "the tool's outcome is unknown",
      cancelled: "cancelled before the tool ran",
    });
  });

  it("shortText collapses white space and cuts long text", () => {
    expect(shortText("  a\n\n b  ")).toBe("a b");
    expect(shortText("x".repeat(60), 10)).toBe("xxxxxxxxx…");
  });
});
