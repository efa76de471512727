import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { toolCallRepairHook } from "langgraph-tool-repair/langgraph";
import { brokenThread, check, closeStubs, openAIChat, searchFlights, searchHotels } from "./_support";

const llm = await openAIChat([{ text: "Flight TP1351 at 08:05." }]);
const tools = [searchFlights, searchHotels];
const checkpointer = new MemorySaver();

// #region docs
const agent = createReactAgent({ llm, tools, preModelHook: toolCallRepairHook({ provider: "openai" }), checkpointer });
// #endregion docs

try {
  const result = await agent.invoke({ messages: brokenThread() }, { configurable: { thread_id: "hook-snippet" } });
  const last = result.messages.at(-1);
  check(last?.content === "Flight TP1351 at 08:05.", "the OpenAI stub accepted the repaired request");
  check(!HumanMessage.isInstance(last), "the agent answered");
} finally {
  await closeStubs();
}
