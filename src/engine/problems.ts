/**
 * `findToolCallProblems`: explains what is wrong without changing anything (the classifiers of every pass,
 * run on the same input).
 */
import type { BaseMessage } from "@langchain/core/messages";
import { coerceMessage, isMessage } from "../messages/coerce";
import { profileFor } from "./profiles";
import { problem, type FindContext } from "./context";
import { PASSES } from "./pipeline";
import type { FindOptions, ToolCallProblem } from "../types";

export function findToolCallProblems(messages: readonly unknown[], options: FindOptions = {}): ToolCallProblem[] {
  if (!Array.isArray(messages)) throw new TypeError("langgraph-tool-repair: findToolCallProblems expects an array of messages");
  const ctx: FindContext = { profile: profileFor(options.provider), trailingIsProblem: options.trailingIsProblem ?? true };
  const problems: ToolCallProblem[] = [];
  const coerced = messages.map((m, i) => {
    if (isMessage(m)) return m;
    const message = coerceMessage(m, i);
    problems.push(problem(ctx, "malformed_message", i, "not a LangChain message instance (a plain or serialized object); coerced to read it"));
    return message;
  }) as BaseMessage[];
  for (const pass of PASSES) problems.push(...pass.find(coerced, ctx));
  return problems.sort((a, b) => a.index - b.index);
}
