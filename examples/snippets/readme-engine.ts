import { brokenThread, check } from "./_support";

const state = { messages: brokenThread() };

// #region docs
import { findToolCallProblems, repairToolCalls } from "langgraph-tool-repair";

findToolCallProblems(state.messages, { provider: "bedrock" });
// [{ kind: "orphan_call", index: 2, toolCallId: "tooluse_hotels02", toolName: "search_hotels",
//    rules: ["B1"], detail: 'tool call tooluse_hotels02 to "search_hotels" has no result' }, ...]

const { messages, repairs } = repairToolCalls(state.messages, { provider: "bedrock" });
// messages === state.messages when repairs is empty
// #endregion docs

const [first] = findToolCallProblems(state.messages, { provider: "bedrock" });
check(
  first.kind === "orphan_call" &&
    first.index === 2 &&
    first.toolCallId === "tooluse_hotels02" &&
    first.toolName === "search_hotels",
  "the first problem is the unanswered hotel search",
);
check(JSON.stringify(first.rules) === '["B1"]', `rules are ${JSON.stringify(first.rules)}`);
check(first.detail === 'tool call tooluse_hotels02 to "search_hotels" has no result', first.detail);
check(repairs.length > 0 && messages !== state.messages, "the thread is repaired");
const again = repairToolCalls(messages, { provider: "bedrock" });
check(again.messages === messages && again.repairs.length === 0, "a valid history comes back as the same array");
