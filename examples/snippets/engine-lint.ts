import { repairToolCalls } from "langgraph-tool-repair";
import { brokenThread } from "./_support";
import { deepStrictEqual } from "node:assert";

// What a test's `expect` does here; the state is a repaired thread.
const expect = (actual: unknown) => ({ toEqual: (expected: unknown) => deepStrictEqual(actual, expected) });
const state = { messages: repairToolCalls(brokenThread(), { provider: "bedrock" }).messages };

// #region docs
import { findToolCallProblems } from "langgraph-tool-repair";

expect(findToolCallProblems(state.messages, { provider: "bedrock" })).toEqual([]);
// #endregion docs
