import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { findToolCallProblems, parseToolPairingError, type ProviderRejection } from "langgraph-tool-repair";
import { bedrockChat, check, closeStubs, gatewayDroppingLargeResults, getReport, type RunningStub } from "./_support";

let stub: RunningStub | undefined;
const rejections = () => stub!.rejections;
const model = (await bedrockChat([], {}, gatewayDroppingLargeResults, (s) => (stub = s))).bindTools([getReport]);
// A valid thread whose long tool result a gateway drops: Bedrock answers B1 for a call the engine sees answered.
const messages = [
  new HumanMessage({ content: "Get me the report.", id: "h1" }),
  new AIMessage({
    content: "",
    id: "a1",
    tool_calls: [{ id: "tooluse_report01", name: "get_report", args: {}, type: "tool_call" }],
  }),
  new ToolMessage({
    content: await getReport.invoke({}),
    tool_call_id: "tooluse_report01",
    name: "get_report",
    id: "t1",
  }),
];
check(findToolCallProblems(messages, { provider: "bedrock" }).length === 0, "the engine sees nothing wrong");
const rejection = (await model.invoke(messages).then(
  () => undefined,
  (error: unknown) => parseToolPairingError(error, { messages, provider: "bedrock" }),
)) as ProviderRejection;
check(
  rejection?.rule === "B1" && rejection.toolCallIds[0] === "tooluse_report01",
  "the gateway's rejection names the call",
);

// #region docs
import { forceRepairToolCalls } from "langgraph-tool-repair";

const { messages: fixed, repairs } = forceRepairToolCalls(messages, rejection, { provider: "bedrock" });
// #endregion docs

try {
  check(
    repairs.some((r) => r.action === "synthesized_result" && r.rejection === rejection),
    "the named call is answered afresh, the repair carries the rejection",
  );
  check(
    fixed.some((m) => HumanMessage.isInstance(m) && m.text.includes("full report")),
    "the dropped result is kept as user text",
  );
  const answer = await model.invoke(fixed);
  check(answer.text === "ok" && rejections().length === 1, "Bedrock accepts the forced repair");
} finally {
  await closeStubs();
}
