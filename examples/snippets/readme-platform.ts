import { AIMessage } from "@langchain/core/messages";
import { bedrockChat, brokenThread, check, closeStubs, searchFlights, searchHotels } from "./_support";

const model = await bedrockChat();
const tools = [searchFlights, searchHotels];

// #region docs
import { createAgent } from "langchain";
import { toolCallRepairMiddleware } from "langgraph-tool-repair/langchain";

// model: your chat model (ChatBedrockConverse, ChatOpenAI, ChatAnthropic, ...); tools: your agent's tools.
// No checkpointer: the platform brings its own. The middleware alone, exported as the graph.
export const agent = createAgent({ model, tools, middleware: [toolCallRepairMiddleware()] });
// #endregion docs

try {
  const result = await agent.invoke({ messages: brokenThread() });
  check(AIMessage.isInstance(result.messages.at(-1)), "the Bedrock stub answered");
} finally {
  await closeStubs();
}
