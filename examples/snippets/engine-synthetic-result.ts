import { deepStrictEqual } from "node:assert";
import { repairToolCalls } from "langgraph-tool-repair";
import { brokenThread, check } from "./_support";

// #region docs
import { ToolMessage } from "@langchain/core/messages";

new ToolMessage({
  content:
    'Tool "search_hotels" (call tooluse_hotels02) has no result: no result was recorded for it. It may ' +
    "have started, and may have taken effect; its outcome is unknown. Do not call it again without " +
    "first checking whether it already took effect.",
  tool_call_id: "tooluse_hotels02",
  name: "search_hotels",
  status: "error",
  id: "tool-repair-tooluse_hotels02",
  additional_kwargs: {
    tool_call_repair: {
      synthetic: true,
      reason: "orphan_call",
      toolCallId: "tooluse_hotels02",
      toolName: "search_hotels",
      toolRun: "outcome_unknown",
    },
  },
});
// #endregion docs

// The message shown is the one the engine builds for the README's incident.
const synthetic = repairToolCalls(brokenThread()).messages.find(
  (m) => ToolMessage.isInstance(m) && m.tool_call_id === "tooluse_hotels02",
);
check(ToolMessage.isInstance(synthetic), "the engine answers the hotel call");
const { content, tool_call_id, name, status, id, additional_kwargs } = synthetic;
deepStrictEqual(
  { content, tool_call_id, name, status, id, additional_kwargs },
  {
    content:
      'Tool "search_hotels" (call tooluse_hotels02) has no result: no result was recorded for it. It may ' +
      "have started, and may have taken effect; its outcome is unknown. Do not call it again without " +
      "first checking whether it already took effect.",
    tool_call_id: "tooluse_hotels02",
    name: "search_hotels",
    status: "error",
    id: "tool-repair-tooluse_hotels02",
    additional_kwargs: {
      tool_call_repair: {
        synthetic: true,
        reason: "orphan_call",
        toolCallId: "tooluse_hotels02",
        toolName: "search_hotels",
        toolRun: "outcome_unknown",
      },
    },
  },
);
