import { HumanMessage } from "@langchain/core/messages";
import { z } from "zod";
import { bedrockChat, check, closeStubs, searchFlights, searchHotels } from "./_support";

const Findings = z.object({ flight: z.string(), hotel: z.string().optional() });
const llm = await bedrockChat([{ text: '{"flight":"TP1351 08:05"}' }]);
const tools = [searchFlights, searchHotels];

// #region docs
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { toolCallRepairHook, withPromptedStructuredOutput, withToolCallRepair } from "langgraph-tool-repair/langgraph";

const agent = createReactAgent(
  withPromptedStructuredOutput({
    llm,                     // a ChatBedrockConverse
    tools,
    responseFormat: Findings,
    version: "v2",           // one task per tool call: a finished sibling's result survives an abort
    preModelHook: toolCallRepairHook({ provider: "bedrock" }),
    checkpointer: withToolCallRepair(new MemorySaver(), { provider: "bedrock" }),  // or a SqliteSaver
  }),
);
// #endregion docs

try {
  const result = await agent.invoke({ messages: [new HumanMessage("A flight to Lisbon?")] }, { configurable: { thread_id: "findings" } });
  check(result.structuredResponse.flight === "TP1351 08:05", "structuredResponse is the validated answer");
} finally {
  await closeStubs();
}
