import { AIMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { bedrockChat, brokenThread, check, closeStubs, searchFlights, searchHotels } from "./_support";

const chatModel = await bedrockChat();
const tools = [searchFlights, searchHotels];
const saver = new MemorySaver();

// #region docs
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { toolCallRepairKit } from "langgraph-tool-repair/langgraph";

// chatModel: your chat model (ChatBedrockConverse, ChatOpenAI, ChatAnthropic, ...); tools: your tools;
// saver: your checkpointer (MemorySaver, SqliteSaver, PostgresSaver, ...).
const repair = toolCallRepairKit();
const model = repair.model(chatModel).bindTools(tools);

const graph = new StateGraph(MessagesAnnotation)
  .addNode("repair", repair.node) // before the model: the thread's structural repairs, persisted
  .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
  .addNode("tools", new ToolNode(tools))
  .addEdge(START, "repair")
  .addEdge("repair", "agent")
  .addConditionalEdges("agent", toolsCondition, ["tools", END])
  .addEdge("tools", "repair")
  .compile({ checkpointer: repair.checkpointer(saver) });
// #endregion docs

try {
  const result = await graph.invoke({ messages: brokenThread() }, { configurable: { thread_id: "t1" } });
  check(AIMessage.isInstance(result.messages.at(-1)), "the Bedrock stub answered");
} finally {
  await closeStubs();
}
