import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
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
const tools = [getReport];
const checkpointer = new MemorySaver();

// #region docs
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { withRequestRepair } from "langgraph-tool-repair";

// createReactAgent binds its tools to it: bindTools keeps working and returns a repairing model.
const agent = createReactAgent({ llm: withRequestRepair(llm), tools, checkpointer });
// #endregion docs

try {
  const config = { configurable: { thread_id: "report" } };
  const first = await agent.invoke({ messages: [new HumanMessage("Get me the report.")] }, config);
  check(
    first.messages.at(-1)?.text === "ok" && calls() === 3 && rejections().length === 1,
    "rejected once, recovered by one retry",
  );
  // Nothing stored the fix: the next turn is rejected and recovered again (two requests).
  await agent.invoke({ messages: [new HumanMessage("Thanks. Anything else?")] }, config);
  check(calls() === 5 && rejections().length === 2, "each later turn is recovered again");
} finally {
  await closeStubs();
}
