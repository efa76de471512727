import { MemorySaver } from "@langchain/langgraph";
import { findToolCallProblems } from "langgraph-tool-repair";
import { bedrockChat, brokenThread, check, closeStubs, searchFlights, searchHotels } from "./_support";

const tools = [searchFlights, searchHotels];
const llm = await bedrockChat([{ text: "Flight TP1351 at 08:05." }]);
const checkpointer = new MemorySaver();

// #region docs
import { MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { withRequestRepair } from "langgraph-tool-repair";
import { toolCallRepairNode } from "langgraph-tool-repair/langgraph";

const model = withRequestRepair(llm).bindTools(tools); // each request shaped for the model's provider

const graph = new StateGraph(MessagesAnnotation)
  .addNode("repair", toolCallRepairNode()) // structural repairs, persisted
  .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
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
  check(result.messages.at(-1)?.text === "Flight TP1351 at 08:05.", "the Bedrock stub accepted the shaped request");
  const stored = (await graph.getState(config)).values.messages;
  check(findToolCallProblems(stored, { level: "structural" }).length === 0, "the node stored the structural fix");
  check(
    findToolCallProblems(stored, { provider: "bedrock" }).some((p) => p.kind === "consecutive_same_role"),
    "the Bedrock shaping is not stored",
  );
} finally {
  await closeStubs();
}
