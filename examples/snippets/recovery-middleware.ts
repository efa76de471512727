import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { findToolCallProblems, type ToolCallRepair } from "langgraph-tool-repair";
import {
  bedrockChat,
  check,
  closeStubs,
  gatewayDroppingLargeResults,
  getReport,
  storedMessages,
  type RunningStub,
} from "./_support";

let stub: RunningStub | undefined;
const calls = (): number => stub!.calls;
const rejections = () => stub!.rejections;
const model = await bedrockChat(
  [{ toolCalls: [{ name: "get_report", args: {} }] }],
  {},
  gatewayDroppingLargeResults,
  (s) => (stub = s),
);
const tools = [getReport];
const saver = new MemorySaver();
const seen: ToolCallRepair[] = [];
const logger = { info: (repair: ToolCallRepair) => seen.push(repair) };

// #region docs
import { createAgent } from "langchain";
import { toolCallRepair } from "langgraph-tool-repair/langchain";

const repair = toolCallRepair({ onRepair: (r) => logger.info(r) }); // recoverRejections: true by default
const agent = createAgent({ model, tools, middleware: [repair.middleware], checkpointer: repair.checkpointer(saver) });
// #endregion docs

try {
  const config = { configurable: { thread_id: "report" } };
  const first = await agent.invoke({ messages: [new HumanMessage("Get me the report.")] }, config);
  check(first.messages.at(-1)?.text === "ok", "the turn is answered");
  // The call, the request the gateway broke (rejected), its retry.
  check(
    calls() === 3 &&
      rejections()
        .map((r) => r.rule)
        .join() === "B1",
    "one rejection, recovered by one retry",
  );
  check(
    seen.some((r) => r.rejection?.rule === "B1"),
    "the repairs are reported with their rejection",
  );
  check(
    findToolCallProblems(await storedMessages(saver, "report"), { level: "structural" }).length === 0,
    "the fix is stored",
  );
  await agent.invoke({ messages: [new HumanMessage("Thanks. Anything else?")] }, config);
  check(calls() === 4 && rejections().length === 1, "the next turn is accepted on its first request");
} finally {
  await closeStubs();
}
