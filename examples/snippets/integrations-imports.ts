import { check } from "./_support";

// #region docs
import { toolCallRepairNode, toolCallRepairHook } from "langgraph-tool-repair/langgraph";
import { toolCallRepairMiddleware } from "langgraph-tool-repair/langchain";
// #endregion docs

check([toolCallRepairNode, toolCallRepairHook, toolCallRepairMiddleware].every((f) => typeof f === "function"), "the three surfaces");
