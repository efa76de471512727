import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { findToolCallProblems } from "langgraph-tool-repair";
import {
  abortWhileHotelsRun,
  bedrockChat,
  check,
  closeStubs,
  incidentScript,
  searchFlights,
  searchHotels,
  storedMessages,
} from "./_support";

const llm = await bedrockChat(incidentScript("Flight TP1351 at 08:05."));
const tools = [searchFlights, searchHotels];
const saver = new MemorySaver();

// #region docs
import { MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { toolCallRepairKit } from "langgraph-tool-repair/langgraph";

const repair = toolCallRepairKit();
const model = repair.model(llm).bindTools(tools);

const graph = new StateGraph(MessagesAnnotation)
  .addNode("repair", repair.node)
  .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
  .addNode("tools", new ToolNode(tools))
  .addEdge(START, "repair")
  .addEdge("repair", "agent")
  .addConditionalEdges("agent", toolsCondition)
  .addEdge("tools", "repair")
  .compile({ checkpointer: repair.checkpointer(saver) });
// #endregion docs

try {
  await abortWhileHotelsRun(
    graph,
    { messages: [new HumanMessage("A flight to Lisbon and a hotel near Alfama?")] },
    "trip",
  );
  const result = await graph.invoke(
    { messages: [new HumanMessage("Just the flight for now.")] },
    { configurable: { thread_id: "trip" } },
  );
  check(result.messages.at(-1)?.text === "Flight TP1351 at 08:05.", "the Bedrock stub accepted the next request");
  const stored = await storedMessages(saver, "trip");
  check(findToolCallProblems(stored, { level: "structural" }).length === 0, "the stored thread is structurally valid");
} finally {
  await closeStubs();
}
