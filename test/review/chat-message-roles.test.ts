/**
 * Review: ChatMessage (LangChain's `generic` message with a free `role`) is judged by its role, but the real
 * adapters do not all map it by role:
 * - ChatBedrockConverse sends EVERY ChatMessage as a user turn (`HumanMessage.isInstance(msg) ||
 *   ChatMessage.isInstance(msg)` -> convertHumanMessageToConverseMessage), so an "assistant" ChatMessage
 *   between two user messages makes three user turns in a row (B6) while the engine calls it clean.
 * - ChatAnthropic throws locally on any ChatMessage (`Message type "generic" is not supported.`).
 * - A ChatMessage with role "tool" is sent by ChatOpenAI as a tool message without `tool_call_id` (O2), and the
 *   engine does not see it as a result at all.
 */
import { describe, expect, it } from "vitest";
import { ChatMessage, HumanMessage } from "@langchain/core/messages";
import { repairToolCalls } from "../../src/engine";
import { validatePayloadFor } from "../support/payloads";

describe("review: ChatMessage roles against the real adapters", () => {
  it("bedrock: an assistant ChatMessage between two user messages is sent as a user turn (B6 after repair)", async () => {
    const h = [new HumanMessage("start"), new ChatMessage({ role: "assistant", content: "an answer" }), new HumanMessage("next")];
    const { messages } = repairToolCalls(h, { provider: "bedrock" });
    expect(await validatePayloadFor("bedrock", messages)).toEqual([]);
  });

  it("anthropic: any ChatMessage makes ChatAnthropic throw locally after repair", async () => {
    const h = [new HumanMessage("start"), new ChatMessage({ role: "assistant", content: "an answer" }), new HumanMessage("next")];
    const { messages } = repairToolCalls(h, { provider: "anthropic" });
    expect(await validatePayloadFor("anthropic", messages)).toEqual([]);
  });

  it("openai: a ChatMessage with role 'tool' is an orphan result the engine does not see (O2 after repair)", async () => {
    const h = [new HumanMessage("start"), new ChatMessage({ role: "tool", content: "a stray tool output" }), new HumanMessage("next")];
    const { messages } = repairToolCalls(h, { provider: "openai" });
    expect(await validatePayloadFor("openai", messages)).toEqual([]);
  });
});
