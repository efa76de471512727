import { check } from "./_support";

// #region docs
import { withRequestRepair } from "langgraph-tool-repair";
import { toolCallRepair, toolCallRepairMiddleware } from "langgraph-tool-repair/langchain";
import {
  toolCallRepairKit,
  toolCallRepairNode,
  toolCallRepairHook,
  withToolCallRepair,
} from "langgraph-tool-repair/langgraph";
// #endregion docs

check(
  [
    withRequestRepair,
    toolCallRepair,
    toolCallRepairMiddleware,
    toolCallRepairKit,
    toolCallRepairNode,
    toolCallRepairHook,
    withToolCallRepair,
  ].every((f) => typeof f === "function"),
  "the setups and the surfaces",
);
