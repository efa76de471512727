import { rmSync } from "node:fs";
import { AIMessage } from "@langchain/core/messages";
import { MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { createAgent } from "langchain";
import { findToolCallProblems } from "langgraph-tool-repair";
import { bedrockChat, brokenThread, check, closeStubs, openAIChat, searchFlights, searchHotels } from "./_support";

const model = await bedrockChat();
const llm = await openAIChat();
const tools = [searchFlights, searchHotels];
const callModel = async (state: typeof MessagesAnnotation.State) => ({ messages: [await model.bindTools(tools).invoke(state.messages)] });

const removeDatabase = () => ["", "-shm", "-wal"].forEach((suffix) => rmSync(`threads.db${suffix}`, { force: true }));

// A thread "t1" stored broken in threads.db (the incident: an unanswered call, then a new message).
removeDatabase();
const seeded = new StateGraph(MessagesAnnotation)
  .addNode("store", () => ({}))
  .addEdge(START, "store")
  .compile({ checkpointer: SqliteSaver.fromConnString("threads.db") });
await seeded.invoke({ messages: brokenThread() }, { configurable: { thread_id: "t1" } });

// #region docs
import { toolCallRepairNode, toolCallRepairHook, withToolCallRepair, repairThread } from "langgraph-tool-repair/langgraph";
import { toolCallRepairMiddleware } from "langgraph-tool-repair/langchain";

// Any checkpointer: heals stored threads on read without ever breaking a real resume, and keeps the
// finished results of sibling tools that a new input would otherwise throw away.
const checkpointer = withToolCallRepair(SqliteSaver.fromConnString("threads.db"));

// StateGraph: a node before the model node; persists the fix, returns no update when clean.
const graph = new StateGraph(MessagesAnnotation)
  .addNode("repair", toolCallRepairNode({ provider: "bedrock" }))
  .addNode("agent", callModel)
  .addEdge(START, "repair")
  .addEdge("repair", "agent")
  .compile({ checkpointer });

// createReactAgent: repairs what the model sees, before every model call.
const reactAgent = createReactAgent({ llm, tools, preModelHook: toolCallRepairHook({ provider: "openai" }) });

// createAgent: heals stored state when a new input arrives, and fixes every model request.
const agent = createAgent({ model, tools, middleware: [toolCallRepairMiddleware()] });

// One stored thread, through the graph (dry run by default).
const report = await repairThread(graph, { configurable: { thread_id: "t1" } });
// #endregion docs

try {
  check(report.problems.length > 0 && !report.applied, "the dry run reports the stored thread's problems");
  const next = await graph.invoke({ messages: [{ role: "user", content: "And a hotel after all?" }] }, { configurable: { thread_id: "t1" } });
  check(AIMessage.isInstance(next.messages.at(-1)), "the Bedrock stub accepted the repaired thread");
  check(findToolCallProblems(next.messages, { provider: "bedrock" }).length === 0, "the stored thread is repaired");
  await reactAgent.invoke({ messages: brokenThread() });
  await agent.invoke({ messages: brokenThread() });
} finally {
  await closeStubs();
  removeDatabase();
}
