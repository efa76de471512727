import { MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { findToolCallProblems } from "langgraph-tool-repair";
import { toolCallRepairMiddleware } from "langgraph-tool-repair/langchain";
import { bedrockChat, brokenThread, check, closeStubs, searchFlights, searchHotels } from "./_support";

const model = await bedrockChat([{ text: "Flight TP1351 at 08:05." }]);
const tools = [searchFlights, searchHotels];
const checkpointer = new MemorySaver();

// #region docs
const agent = createAgent({ model, tools, middleware: [toolCallRepairMiddleware()], checkpointer });
// #endregion docs

try {
  const config = { configurable: { thread_id: "middleware-snippet" } };
  const result = await agent.invoke({ messages: brokenThread() }, config);
  check(
    result.messages.at(-1)?.text === "Flight TP1351 at 08:05.",
    "the Bedrock stub accepted the request (shaped for the model's provider)",
  );
  check(
    findToolCallProblems(result.messages, { level: "structural" }).length === 0,
    "beforeAgent stored the structural fix",
  );
  check(
    result.messages.filter((m) => m.getType() === "human").length === 2,
    "the user messages are stored as sent (the shaping stays in the request)",
  );
} finally {
  await closeStubs();
}
