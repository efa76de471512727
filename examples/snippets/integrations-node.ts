import { MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { findToolCallProblems } from "langgraph-tool-repair";
import { toolCallRepairNode } from "langgraph-tool-repair/langgraph";
import { bedrockChat, brokenThread, check, closeStubs, searchFlights, searchHotels } from "./_support";

const tools = [searchFlights, searchHotels];
const llm = (await bedrockChat()).bindTools(tools);
const callModel = async (state: typeof MessagesAnnotation.State) => ({ messages: [await llm.invoke(state.messages)] });
const checkpointer = new MemorySaver();

// #region docs
const graph = new StateGraph(MessagesAnnotation)
  .addNode("repair", toolCallRepairNode({ provider: "bedrock" }))
  .addNode("agent", callModel)
  .addNode("tools", new ToolNode(tools))
  .addEdge(START, "repair")
  .addEdge("repair", "agent")
  .addConditionalEdges("agent", toolsCondition)
  .addEdge("tools", "repair") // or straight to "agent": the tools node leaves a valid history
  .compile({ checkpointer });
// #endregion docs

try {
  const config = { configurable: { thread_id: "node-snippet" } };
  const result = await graph.invoke({ messages: brokenThread() }, config);
  check(findToolCallProblems(result.messages, { provider: "bedrock" }).length === 0, "the Bedrock stub accepted the repaired thread");
} finally {
  await closeStubs();
}
