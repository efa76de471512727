/**
 * Recorded rejection texts and the clients' error code, through the real clients against the strict stubs: A3 names
 * a position, which recovery maps back to the exchange; `INVALID_TOOL_RESULTS` marks a pairing rejection whose text
 * no rule knows.
 */
import { describe, expect, it } from "vitest";
import { withRequestRepair } from "../../src/integrations/model-wrapper";
import { parseToolPairingError } from "../../src/recovery/parse-error";
import { aiWithCalls, human, toolResult } from "../support/builders";
import { anthropicModel, openAIModel, startAnthropicStub, startOpenAIStub } from "../support/stubs";
import { rejectionOf, stubTracker } from "../integrations/fixtures";

const track = stubTracker();
type Dict = Record<string, unknown>;

describe("A3 (a position, no ids) through ChatAnthropic", () => {
  it("the rejection is mapped back to the exchange, repaired there, and the retry is accepted", async () => {
    const stub = await track(startAnthropicStub());
    // The request goes as it is (no request repair): a user message sits between the call and its result.
    const model = withRequestRepair(anthropicModel(stub), { repairRequests: false });
    const history = [
      human("first question"),
      aiWithCalls("toolu_early"),
      toolResult("toolu_early"),
      human("second question"),
      aiWithCalls("toolu_late"),
      human("please also check the weekend"),
      toolResult("toolu_late"),
    ];
    await model.invoke(history);
    expect(stub.rejections.map((r) => r.rule)).toEqual(["A3"]);
    expect(stub.rejections[0].message).toMatch(/^messages\.5: Did not find 1 `tool_result` block\(s\)/);
    const sent = (stub.requests[1] as { messages: { role: string; content: Dict[] | string }[] }).messages;
    // The turn after the call opens with its result; the steer follows it, nothing lost.
    expect(sent[4].role).toBe("assistant");
    expect((sent[5].content as Dict[])[0]).toMatchObject({ type: "tool_result", tool_use_id: "toolu_late" });
    expect(JSON.stringify(sent.slice(5))).toContain("please also check the weekend");
    expect(JSON.stringify(sent.slice(5))).toContain("result of toolu_late");
  });

  it("where the engine sees nothing wrong (a gateway breaks long results), the exchange's calls are answered afresh", async () => {
    // The gateway puts a notice before a tool result longer than it lets through: Anthropic answers A3 there.
    const stub = await track(
      startAnthropicStub({
        extraRule: (request) => {
          const messages = (request as { messages: { role: string; content: unknown }[] }).messages;
          const at = messages.findIndex(
            ({ content }) =>
              Array.isArray(content) && content[0]?.type === "tool_result" && JSON.stringify(content[0]).length > 400,
          );
          return at === -1
            ? undefined
            : {
                rule: "A3",
                message:
                  `messages.${at}: Did not find 1 \`tool_result\` block(s) at the beginning of this message. Messages ` +
                  "following `tool_use` blocks must begin with a matching number of `tool_result` blocks.",
              };
        },
      }),
    );
    const model = withRequestRepair(anthropicModel(stub));
    const long = `report: ${"x".repeat(500)}`;
    await model.invoke([human("q"), aiWithCalls("toolu_big"), toolResult("toolu_big", long), human("next")]);
    expect(stub.rejections.map((r) => r.rule)).toEqual(["A3"]);
    const sent = (stub.requests[1] as { messages: { role: string; content: Dict[] | string }[] }).messages;
    // The call answered afresh (error-marked), the long result set aside as user text right after: nothing lost.
    expect((sent[2].content as Dict[])[0]).toMatchObject({ type: "tool_result", tool_use_id: "toolu_big" });
    expect(JSON.stringify(sent[2].content)).not.toContain(long);
    expect(sent[3]).toMatchObject({ role: "user", content: expect.stringContaining(long) });
  });

  it("parses the stub's text to the position and the message there", async () => {
    const stub = await track(startAnthropicStub());
    const history = [human("q"), aiWithCalls("toolu_a"), human("hurry"), toolResult("toolu_a")];
    const error = await rejectionOf(() => anthropicModel(stub).invoke(history));
    expect(parseToolPairingError(error, { messages: history, provider: "anthropic" })).toMatchObject({
      kind: "results_not_first",
      rule: "A3",
      toolCallIds: [],
      payloadIndex: 2,
      messageIndex: 2,
    });
  });
});

describe("the clients' INVALID_TOOL_RESULTS code", () => {
  const unknown = { status: 400, message: "tool_calls rejected by a rule no table names yet" };

  it("ChatAnthropic sets it on a 400 about tools, and recovery reads it", async () => {
    const stub = await track(startAnthropicStub({ fail: () => unknown }));
    const error = await rejectionOf(() => anthropicModel(stub).invoke([human("q")]));
    expect((error as unknown as Dict).lc_error_code).toBe("INVALID_TOOL_RESULTS");
    expect(parseToolPairingError(error)).toMatchObject({ provider: "anthropic", kind: "invalid_tool_results" });
  });

  it("ChatOpenAI sets it on a 400 about tool_calls, and recovery reads it", async () => {
    const stub = await track(startOpenAIStub({ fail: () => unknown }));
    const error = await rejectionOf(() => openAIModel(stub).invoke([human("q")]));
    expect((error as unknown as Dict).lc_error_code).toBe("INVALID_TOOL_RESULTS");
    expect(parseToolPairingError(error)).toMatchObject({ provider: "openai", kind: "invalid_tool_results" });
  });
});
