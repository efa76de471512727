import { MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { findToolCallProblems } from "langgraph-tool-repair";
import { toolCallRepairMiddleware } from "langgraph-tool-repair/langchain";
import { bedrockChat, brokenThread, check, closeStubs, searchFlights, searchHotels } from "./_support";

const model = await bedrockChat([{ text: "Flight TP1351 at 08:05." }]);
const tools = [searchFlights, searchHotels];
const checkpointer = new MemorySaver();

// #region docs
const agent = createAgent({ model, tools, middleware: [toolCallRepairMiddleware({ provider: "bedrock" })], checkpointer });
// #endregion docs

try {
  const result = await agent.invoke({ messages: brokenThread() }, { configurable: { thread_id: "middleware-snippet" } });
  check(result.messages.at(-1)?.content === "Flight TP1351 at 08:05.", "the Bedrock stub accepted the repaired thread");
  check(findToolCallProblems(result.messages, { provider: "bedrock" }).length === 0, "the stored thread is healed");
} finally {
  await closeStubs();
}
