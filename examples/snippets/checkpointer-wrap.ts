import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { findToolCallProblems, withRequestRepair, type ToolCallRepair } from "langgraph-tool-repair";
import { bedrockChat, brokenThread, check, closeStubs, searchFlights, searchHotels } from "./_support";

// A StateGraph whose model node sends through withRequestRepair (Bedrock needs its requests shaped).
const llm = withRequestRepair(await bedrockChat([{ text: "Flight TP1351 at 08:05." }])).bindTools([
  searchFlights,
  searchHotels,
]);
const builder = new StateGraph(MessagesAnnotation)
  .addNode("agent", async (state) => ({ messages: [await llm.invoke(state.messages)] }))
  .addNode("tools", new ToolNode([searchFlights, searchHotels]))
  .addEdge(START, "agent")
  .addConditionalEdges("agent", toolsCondition, ["tools", END])
  .addEdge("tools", "agent");
const thread_id = "thread-1";
const seen: ToolCallRepair[] = [];
const logger = { info: (repair: ToolCallRepair) => seen.push(repair) };

// #region docs
import { MemorySaver } from "@langchain/langgraph";
import { withToolCallRepair, repairThread } from "langgraph-tool-repair/langgraph";

const graph = builder.compile({
  checkpointer: withToolCallRepair(new MemorySaver(), { onRepair: (r) => logger.info(r) }),
});

const report = await repairThread(graph, { configurable: { thread_id } }); // dry run: what would change
await repairThread(graph, { configurable: { thread_id } }, { dryRun: false }); // write the fix
// #endregion docs

try {
  check(report.problems.length === 0 && !report.applied, "a thread that does not exist yet has nothing to repair");
  // The same calls on a stored broken thread: the dry run reports, the second call writes the fix.
  const config = { configurable: { thread_id: "broken" } };
  await graph.updateState(config, { messages: brokenThread() }, "agent");
  const dryRun = await repairThread(graph, config);
  check(
    dryRun.problems.some((p) => p.kind === "orphan_call") && !dryRun.applied,
    "the dry run reports and writes nothing",
  );
  const written = await repairThread(graph, config, { dryRun: false });
  check(written.applied, "the fix is written");
  const stored = (await graph.getState(config)).values.messages;
  check(
    findToolCallProblems(stored, { level: "structural" }).length === 0,
    "the stored thread is repaired structurally",
  );
  check(
    findToolCallProblems(stored, { provider: "bedrock" }).some((p) => p.kind === "consecutive_same_role"),
    "the Bedrock shaping is not stored",
  );
  // Written as the tools node: the model runs next, and its request is shaped for Bedrock by withRequestRepair.
  const resumed = await graph.invoke(null, config);
  check(resumed.messages.at(-1)?.text === "Flight TP1351 at 08:05.", "the Bedrock stub accepted the next request");
} finally {
  await closeStubs();
}
