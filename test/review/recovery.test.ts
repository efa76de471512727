/**
 * Review: recovery reading errors that are not about the history, and a reporting callback.
 *
 * - OpenAI rejects a bad TOOL DEFINITION name with
 *   `Invalid 'tools[0].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`
 *   The `Invalid '` anchor correctly refuses the `tools[...]` path, but the O5 fallback anchor
 *   ("Expected a string that matches the pattern ...") then claims it as a history rejection (O5,
 *   invalid_tool_name): surfaces force-repair the history (strict profile) and send it once more, although no
 *   history change can fix a tool definition.
 * - forceRepairToolCalls calls `onRepair` unguarded inside `readingInput`: a throwing callback becomes a
 *   ToolCallRepairInputError "messages could not be read", and the repair is lost (the engine's own
 *   repairToolCalls swallows a throwing onRepair).
 */
import { describe, expect, it } from "vitest";
import { AIMessage, HumanMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { forceRepairToolCalls, parseToolPairingError, withRequestRepair } from "../../src/index";

const toolDefinitionError = () =>
  Object.assign(
    new Error("400 Invalid 'tools[0].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."),
    { status: 400, error: { message: "Invalid 'tools[0].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", type: "invalid_request_error", param: "tools[0].function.name", code: "invalid_value" } },
  );

describe("review: recovery", () => {
  it("a tool-definition name error is not a history rejection", () => {
    expect(parseToolPairingError(toolDefinitionError(), { provider: "openai" })).toBeUndefined();
  });

  it("withRequestRepair does not re-send (reshaped) history for a tool-definition error", async () => {
    let calls = 0;
    const sent: BaseMessage[][] = [];
    class Rejecting extends FakeListChatModel {
      override async _generate(messages: BaseMessage[]): Promise<never> {
        calls++;
        sent.push(messages);
        throw toolDefinitionError();
      }
    }
    const model = withRequestRepair(new Rejecting({ responses: ["never"] }), { provider: "openai" });
    // Valid for OpenAI (consecutive user messages are fine there); the strict profile would merge them.
    await expect(model.invoke([new SystemMessage("sys"), new HumanMessage("a"), new HumanMessage("b")])).rejects.toThrow(/tools\[0\]/);
    expect(calls).toBe(1);
  });

  it("a throwing onRepair does not turn a forced repair into an input error", () => {
    const h = [new HumanMessage("q"), new AIMessage({ content: "", tool_calls: [{ id: "call_a", name: "f", args: {}, type: "tool_call" }] }), new HumanMessage("next")];
    const rejection = parseToolPairingError(new Error("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_a"))!;
    expect(rejection.toolCallIds).toEqual(["call_a"]);
    const result = forceRepairToolCalls(h, rejection, { onRepair: () => { throw new Error("reporter down"); } });
    expect(result.repairs.length).toBeGreaterThan(0);
  });
});
