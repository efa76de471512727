/**
 * `payloadIndex` on problems: where the message lands in what the real adapter sends, so a production error's
 * `messages.N` can be matched to the problem (and the message) it is about.
 */
import { afterEach, describe, expect, it } from "vitest";
import { SystemMessage } from "@langchain/core/messages";
import { findToolCallProblems } from "../../src/engine";
import { parseToolPairingError } from "../../src/recovery/parse-error";
import { aiWithCalls, human, toolResult } from "../support/builders";
import { anthropicModel, startAnthropicStub, type RunningStub } from "../support/stubs";

const stubs: RunningStub[] = [];
afterEach(async () => {
  for (const stub of stubs.splice(0)) await stub.close();
});

describe("payloadIndex", () => {
  it("is the index Anthropic's own error names for the same message (system lifted out, tool results merged)", async () => {
    const history = [
      new SystemMessage("be brief"),
      human("q1"),
      aiWithCalls("toolu_a", "toolu_b"),
      toolResult("toolu_a"),
      toolResult("toolu_b"),
      human("q2"),
      aiWithCalls("toolu_c"),
      human("never mind"),
    ];
    const problem = findToolCallProblems(history, { provider: "anthropic" }).find((p) => p.kind === "orphan_call")!;
    expect(problem).toMatchObject({ index: 6, toolCallId: "toolu_c" });
    // The system prompt is lifted out and the results and the next question share one user turn: the error
    // names the orphan call's message by its place in that `messages` array, which payloadIndex gives too.
    const stub = await startAnthropicStub();
    stubs.push(stub);
    const error = await anthropicModel(stub)
      .invoke(history)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    const parsed = parseToolPairingError(error, { messages: history, provider: "anthropic" });
    expect(parsed).toMatchObject({ kind: "missing_results", toolCallIds: ["toolu_c"] });
    expect(problem.payloadIndex).toBe(parsed!.payloadIndex);
    expect(parsed!.messageIndex).toBe(problem.index);
  });

  it("is left out for 'strict' (no one payload) and for a message not in the payload's array", () => {
    const history = [human("q"), aiWithCalls("a"), human("next")];
    expect(findToolCallProblems(history).every((p) => p.payloadIndex === undefined)).toBe(true);
    const bedrock = findToolCallProblems([new SystemMessage("s"), human("q"), aiWithCalls("a"), human("next")], {
      provider: "bedrock",
    });
    expect(bedrock.find((p) => p.kind === "orphan_call")?.payloadIndex).toBe(1);
  });
});
