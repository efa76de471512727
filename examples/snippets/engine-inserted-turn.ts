import { repairToolCalls } from "langgraph-tool-repair";
import { brokenThread, check } from "./_support";

// #region docs
import type { BaseMessage } from "@langchain/core/messages";
import { isSyntheticResult, repairMarkerOf } from "langgraph-tool-repair";

/** A turn the package inserted into a request (a placeholder user or assistant turn), not a placeholder result. */
const isInsertedTurn = (m: BaseMessage) => repairMarkerOf(m)?.synthetic === true && !isSyntheticResult(m);
// #endregion docs

// For Bedrock the README's incident needs an assistant turn between the tool results and the next user message.
const sent = repairToolCalls(brokenThread(), { provider: "bedrock" }).messages;
const inserted = sent.filter(isInsertedTurn);
check(inserted.length === 1, "one inserted turn");
check(inserted[0].getType() === "ai", "it is an assistant turn");
check(String(inserted[0].content).startsWith("[No reply was given"), "it is the 'No reply was given' turn");
check(sent.filter(isSyntheticResult).length === 1, "the placeholder result is not counted as an inserted turn");
