import { HumanMessage } from "@langchain/core/messages";
import { END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { findToolCallProblems } from "langgraph-tool-repair";
import { bedrockChat, check, closeStubs, gatewayDroppingLargeResults, getReport, type RunningStub } from "./_support";

let stub: RunningStub | undefined;
const calls = (): number => stub!.calls;
const rejections = () => stub!.rejections;
const llm = await bedrockChat(
  [{ toolCalls: [{ name: "get_report", args: {} }] }],
  {},
  gatewayDroppingLargeResults,
  (s) => (stub = s),
);
const boundModel = llm.bindTools([getReport]);

// #region docs
import type { BaseMessage } from "@langchain/core/messages";
import { MessagesAnnotation } from "@langchain/langgraph";
import { forceRepairToolCalls, withRequestRepair, type ProviderRejection } from "langgraph-tool-repair";
import { replaceAllMessages } from "langgraph-tool-repair/langgraph";

// A custom model node that stores what a recovered rejection fixed (create the wrapper per call: per run).
async function callModel(state: typeof MessagesAnnotation.State) {
  let rejection: ProviderRejection | undefined;
  const model = withRequestRepair(boundModel, { onRecovery: (recovery) => (rejection = recovery.rejection) });
  const answer = await model.invoke(state.messages);
  if (!rejection) return { messages: [answer] };
  // The structural fix of what the provider named; the request's own shaping is not stored.
  const fixed: BaseMessage[] = forceRepairToolCalls(state.messages, rejection, { level: "structural" }).messages;
  return { messages: [...replaceAllMessages(fixed), answer] };
}
// #endregion docs

try {
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("agent", callModel)
    .addNode("tools", new ToolNode([getReport]))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", toolsCondition, ["tools", END])
    .addEdge("tools", "agent")
    .compile({ checkpointer: new MemorySaver() });
  const config = { configurable: { thread_id: "report" } };
  const first = await graph.invoke({ messages: [new HumanMessage("Get me the report.")] }, config);
  check(
    first.messages.at(-1)?.text === "ok" && calls() === 3 && rejections().length === 1,
    "rejected once, recovered by one retry",
  );
  check(
    findToolCallProblems(first.messages, { level: "structural" }).length === 0,
    "the stored thread is structurally valid",
  );
  await graph.invoke({ messages: [new HumanMessage("Thanks. Anything else?")] }, config);
  check(calls() === 4 && rejections().length === 1, "the stored fix: the next turn is accepted on its first request");
} finally {
  await closeStubs();
}
