import { HumanMessage } from "@langchain/core/messages";
import { z } from "zod";
import { bedrockChat, check, closeStubs, searchFlights, searchHotels } from "./_support";

const Findings = z.object({ flight: z.string(), hotel: z.string().optional() });
const model = await bedrockChat([{ text: '{"flight":"TP1351 08:05"}' }], { model: "meta.llama3-1-70b-instruct-v1:0" });
const tools = [searchFlights, searchHotels];

// #region docs
import { MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { promptedStructuredOutputMiddleware, toolCallRepairMiddleware } from "langgraph-tool-repair/langchain";
import { withToolCallRepair } from "langgraph-tool-repair/langgraph";

const agent = createAgent({
  model,                     // e.g. ChatBedrockConverse with "meta.llama3-1-70b-instruct-v1:0" (no tool_choice)
  tools,
  responseFormat: Findings,
  middleware: [toolCallRepairMiddleware({ provider: "bedrock" }), promptedStructuredOutputMiddleware()],
  checkpointer: withToolCallRepair(new MemorySaver(), { provider: "bedrock" }),
});
// #endregion docs

try {
  const result = await agent.invoke({ messages: [new HumanMessage("A flight to Lisbon?")] }, { configurable: { thread_id: "findings" } });
  check(result.structuredResponse.flight === "TP1351 08:05", "structuredResponse is the validated answer");
} finally {
  await closeStubs();
}
