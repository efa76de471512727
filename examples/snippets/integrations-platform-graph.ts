import { AIMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { findToolCallProblems } from "langgraph-tool-repair";
import { bedrockChat, brokenThread, check, closeStubs, searchFlights, searchHotels } from "./_support";

const llm = await bedrockChat();
const tools = [searchFlights, searchHotels];

// #region docs
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { toolCallRepairKit } from "langgraph-tool-repair/langgraph";

// llm: your chat model (ChatBedrockConverse, ChatOpenAI, ChatAnthropic, ...); tools: your agent's tools.
const repair = toolCallRepairKit();

// No checkpointer: the platform brings its own, and stores what preModelHook repairs.
export const agent = createReactAgent({
  llm: repair.model(llm), // every request repaired for the model's provider; a rejection retried once
  tools,
  version: "v2", // one task per tool call: a call that finished before an abort keeps its result
  preModelHook: repair.preModelHook, // the thread's structural repairs, persisted
});
// #endregion docs

try {
  // What the platform does with an exported graph: it attaches its own checkpointer.
  agent.checkpointer = new MemorySaver();
  const config = { configurable: { thread_id: "t1" } };
  const result = await agent.invoke({ messages: brokenThread() }, config);
  check(AIMessage.isInstance(result.messages.at(-1)), "the Bedrock stub answered");
  const stored = (await agent.getState(config)).values.messages;
  check(
    findToolCallProblems(stored, { level: "structural" }).length === 0,
    "the platform's checkpointer holds the repaired thread",
  );
} finally {
  await closeStubs();
}
