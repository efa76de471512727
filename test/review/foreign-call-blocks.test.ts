/**
 * Review: a Converse-style `{ toolUse: { toolUseId, name, input } }` content block (a thread written through
 * Bedrock Converse, moved to OpenAI) is read as a call location, but for provider "openai" it stays in the
 * content: ChatOpenAI sends it as a content part with no `type` (O6, "Supported values are: 'text' and
 * 'refusal'"). "strict" removes it; "openai" does not (call_block_in_content is Bedrock/strict only).
 */
import { describe, expect, it } from "vitest";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { repairToolCalls } from "../../src/engine";
import { validatePayloadFor } from "../support/payloads";

describe("review: Converse call blocks on OpenAI", () => {
  it("openai: the repaired history's payload has no part without a type", async () => {
    const h = [
      new HumanMessage("start"),
      new AIMessage({
        content: [{ toolUse: { toolUseId: "call_a", name: "search", input: {} } }] as never,
        tool_calls: [{ id: "call_a", name: "search", args: {}, type: "tool_call" }],
      }),
      new ToolMessage({ content: "result", tool_call_id: "call_a" }),
      new HumanMessage("next"),
    ];
    const { messages } = repairToolCalls(h, { provider: "openai" });
    expect(await validatePayloadFor("openai", messages)).toEqual([]);
  });
});
