/**
 * Pass "call-steps" (request shaping, Gemini): each model step as @langchain/google-genai must send it.
 * - Parallel calls (G3): the adapter sends each ToolMessage as its own content, so a model turn with n calls
 *   meets n response turns of one part each. Each call becomes its own step, answered right after: the first
 *   keeps the message (its text, id, signature), the others are new assistant steps marked synthetic. Only a
 *   complete block (every result right after its calls) is split; an open trailing exchange is left as it is.
 * - Thought signatures (G6, Gemini 3 and later): in the current turn (from the last user message on), the
 *   first call of each step carries its signature in `__gemini_function_call_thought_signatures__`. A call
 *   without one (a step made here, a call from another provider, a renamed call of an older client) gets
 *   Google's documented placeholder. The adapter writes a placeholder of its own only for model ids containing
 *   "gemini-3", so a later model (or a `-latest` alias) would get the call unsigned.
 * Strict does neither: a step made here has no thinking block, which Anthropic with thinking refuses (A10).
 */
import type { AIMessage, BaseMessage } from "@langchain/core/messages";
import { callStepOf, rewriteToolCalls, withPlaceholderSignature } from "../../messages/build";
import { isAssistant, isDict, isToolResult, resultIdOf, turnOf, type Dict } from "../../messages/inspect";
import { GEMINI_SIGNATURES_KEY, PLACEHOLDER_THOUGHT_SIGNATURE } from "../../messages/responses";
import { findEach, problem, sameOrNew, type FindContext, type RepairPass } from "../context";

type Call = Dict & { id?: string; name?: string };
const NO_CALLS: Call[] = [];
const callsOf = (m: AIMessage) => (Array.isArray(m.tool_calls) ? (m.tool_calls as Call[]) : NO_CALLS);

function signaturesOf(m: AIMessage): Dict {
  const map = m.additional_kwargs?.[GEMINI_SIGNATURES_KEY];
  return isDict(map) ? map : {};
}

const isSigned = (signatures: Dict, id: unknown) =>
  typeof id === "string" && typeof signatures[id] === "string" && signatures[id] !== "";

/** Whether the results of all `calls` stand right after `index`, one each. */
function answeredRightAfter(messages: readonly BaseMessage[], index: number, calls: Dict[]) {
  const ids = new Set(calls.map((c) => c.id));
  for (let k = 1; k <= calls.length; k++) {
    const m = messages[index + k];
    if (!isToolResult(m) || !ids.delete(resultIdOf(m))) return false;
  }
  return !ids.size;
}

/** Judges each message (the pass and the clean walk alike): what its step needs, if anything. */
function stepJudge(messages: readonly BaseMessage[], { oneCallPerStep, signedCalls }: FindContext["profile"]) {
  let currentTurn = messages.length;
  while (currentTurn > 0 && turnOf(messages[currentTurn - 1]) !== "user") currentTurn--;
  // `split`: the message becomes one step per call; `sign`: its first call lacks a signature the current turn needs.
  return (m: BaseMessage, index: number) => {
    const calls = isAssistant(m) ? callsOf(m) : NO_CALLS;
    if (!calls.length) return;
    const split = oneCallPerStep && calls.length > 1 && answeredRightAfter(messages, index, calls);
    // The first call carries its thought signature (G6).
    const sign = signedCalls && index >= currentTurn && !isSigned(signaturesOf(m as AIMessage), calls[0].id);
    // `split`: the message becomes one step per call; `sign`: its first call lacks a signature the current turn needs.
    return split || sign ? { index, split, sign } : undefined;
  };
}

const classifySteps = (messages: readonly BaseMessage[], { profile }: FindContext) =>
  profile.oneCallPerStep || profile.signedCalls ? findEach(messages, stepJudge(messages, profile)) : [];

const PARALLEL = "parallel calls whose results the adapter sends as separate turns";
const unsigned = (call: { id?: string }) =>
  `call ${call.id} opens a step of the current turn without a thought signature`;

export const callStepsPass: RepairPass = {
  structural: false,
  clean(w) {
    const { profile } = w;
    if (!profile.oneCallPerStep && !profile.signedCalls) return;
    let judge: ReturnType<typeof stepJudge>;
    return {
      start: () => {
        judge = stepJudge(w.messages as BaseMessage[], profile);
      },
      ai: (m, i) => judge(m as BaseMessage, i) === undefined,
    };
  },
  find(messages, ctx) {
    const problems = [];
    for (const { index, split, sign } of classifySteps(messages, ctx)) {
      const first = callsOf(messages[index] as AIMessage)[0];
      if (split) problems.push(problem(ctx, "parallel_calls", index, PARALLEL));
      if (sign) problems.push(problem(ctx, "unsigned_call", index, unsigned(first), first));
    }
    return problems;
  },
  repair(messages, ctx) {
    const found = classifySteps(messages, ctx);
    if (!found.length) return messages;
    const out: BaseMessage[] = [];
    let next = 0;
    for (let index = 0; index < messages.length; index++) {
      const m = messages[index];
      const f = found[next]?.index === index ? found[next++] : undefined;
      if (!f) {
        out.push(m);
        continue;
      }
      const message = m as AIMessage;
      const calls = callsOf(message);
      let first = f.sign ? withPlaceholderSignature(message) : message;
      if (f.sign) ctx.report(m, index, "unsigned_call", "rebuilt_message", unsigned(calls[0]), calls[0]);
      const signatures = signaturesOf(first);
      if (f.split) first = rewriteToolCalls(first, (ref) => (ref.id !== calls[0].id ? "drop" : undefined));
      ctx.derive(m, first);
      out.push(first);
      if (!f.split) continue;
      const resultOf = new Map<unknown, BaseMessage>();
      for (let k = 1; k <= calls.length; k++)
        resultOf.set(resultIdOf(messages[index + k] as never), messages[index + k]);
      calls.forEach((call, k) => {
        if (k > 0) {
          const signature = isSigned(signatures, call.id)
            ? (signatures[call.id as string] as string)
            : PLACEHOLDER_THOUGHT_SIGNATURE;
          out.push(callStepOf(message, call, signature, k + 1));
          ctx.report(m, index, "parallel_calls", "inserted_assistant_message", PARALLEL, call);
        }
        out.push(resultOf.get(call.id)!);
      });
      index += calls.length;
    }
    return sameOrNew(messages, out);
  },
};
