import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { findToolCallProblems } from "langgraph-tool-repair";
import { bedrockChat, brokenThread, check, closeStubs, searchFlights, searchHotels } from "./_support";

const llm = (await bedrockChat()).bindTools([searchFlights, searchHotels]);
const builder = new StateGraph(MessagesAnnotation)
  .addNode("agent", async (state) => ({ messages: [await llm.invoke(state.messages)] }))
  .addNode("tools", new ToolNode([searchFlights, searchHotels]))
  .addEdge(START, "agent")
  .addConditionalEdges("agent", toolsCondition, ["tools", END])
  .addEdge("tools", "agent");
const thread_id = "thread-1";

// #region docs
import { MemorySaver } from "@langchain/langgraph";
import { withToolCallRepair, repairThread } from "langgraph-tool-repair/langgraph";

const graph = builder.compile({
  checkpointer: withToolCallRepair(new MemorySaver(), { provider: "bedrock", onRepair: console.log }),
});

const report = await repairThread(graph, { configurable: { thread_id } }); // dry run: what would change
await repairThread(graph, { configurable: { thread_id } }, { dryRun: false }); // write the fix
// #endregion docs

try {
  check(report.problems.length === 0, "a thread that does not exist yet has nothing to repair");
  // The same calls on a stored broken thread: the dry run reports, the second call writes the fix.
  const config = { configurable: { thread_id: "broken" } };
  await graph.updateState(config, { messages: brokenThread() }, "agent");
  const dryRun = await repairThread(graph, config);
  check(dryRun.problems.length > 0 && !dryRun.applied, "the dry run reports and writes nothing");
  const written = await repairThread(graph, config, { dryRun: false });
  check(written.applied, "the fix is written");
  const stored = (await graph.getState(config)).values.messages;
  check(findToolCallProblems(stored, { provider: "bedrock" }).length === 0, "the stored thread is healed");
} finally {
  await closeStubs();
}
