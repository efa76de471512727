/**
 * The engine's one front door. `createRepairer(options)` validates and resolves the options and the provider
 * profile once, and returns the three things every surface needs:
 * - `isClean(messages)`: the allocation-free walk (what runs before every model call);
 * - `find(messages)`: every problem, explained, nothing changed;
 * - `repair(messages)`: the pipeline of passes, copy-on-write, every repair reported as data.
 * `repairToolCalls`, `findToolCallProblems` and `isCleanHistory` are the same operations for one call.
 *
 * Each of them is a {@link boundary}: bad input gets a {@link ToolCallRepairInputError} naming the argument (and
 * the message index) and what is accepted, read once by the coercion; anything else that escapes is wrapped
 * into one, with the original as `cause`. Nothing here mutates its input or keeps it after returning.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { assertArray, atMessage, boundary } from "../errors";
import { isMessage, readMessage } from "../messages/coerce";
import { CleanWalk } from "./clean";
import { problem, type PassContext } from "./context";
import { resolveOptions, type ResolvedOptions } from "./options";
import { PASSES } from "./pipeline";
import { payloadPositions } from "../models/positions";
import { profileFor, toolBlocksAsText } from "./profiles";
import type { FindOptions, RepairOptions, RepairResult, ToolCallProblem, ToolCallRepair } from "../types";

export type { ResolvedOptions, SyntheticText } from "./options";
export { OPTIONS as ENGINE_OPTIONS, guardedText } from "./options";
export { FORCED_REPAIRS, REJECTION_TEXTS, isAcceptedId, profileFor } from "./profiles";

/** The engine bound to one set of options: resolve once, use for every history. */
export interface Repairer {
  /** The options as resolved (defaults filled in). */
  readonly options: Readonly<ResolvedOptions>;
  /** Whether `repair` would change nothing: one walk, no allocation per message. */
  isClean(messages: readonly unknown[]): boolean;
  /** Every problem `repair` would fix, with its index, call, provider rule ids and a sentence; nothing changed. */
  find(messages: readonly unknown[]): ToolCallProblem[];
  /**
   * The repaired history: the input array itself when nothing is wrong, otherwise a new array whose untouched
   * messages are the input's own objects. Each repair is returned and passed to `onRepair`.
   */
  repair<M = BaseMessage>(messages: M[]): RepairResult<M>;
}

const HOLE = "is a hole in a sparse array, not a message";
export const COERCED = "a plain, serialized or stored object, not a LangChain message instance (coerced)";

/** Every input as a LangChain message (coerced where it must be, listed in `coerced`), reading each one once. */
function readMessages(input: readonly unknown[]) {
  const messages: BaseMessage[] = new Array(input.length);
  const coerced = [];
  for (let i = 0; i < input.length; i++) {
    const value = input[i];
    if (isMessage(value)) messages[i] = value;
    else {
      if (value === undefined && !(i in input)) throw atMessage(i, HOLE);
      messages[i] = readMessage(value, i);
      coerced.push(i);
    }
  }
  return { messages, coerced };
}

/** Passes each repair to `onRepair`; a throwing callback does not undo or fail the repair it reports. */
export function reportRepairsSafely(
  onRepair: RepairOptions["onRepair"],
  repairs: readonly ToolCallRepair[],
  surface: "engine" | "recovery" = "engine",
) {
  if (!onRepair) return;
  for (const repair of repairs) {
    try {
      onRepair(repair, { surface });
    } catch {
      // A reporting callback must not undo or fail the repair it reports.
    }
  }
}

/**
 * The engine's operations for resolved options, kept off the user's {@link Repairer}: `isClean` takes the name
 * errors give the caller.
 */
function engine(options: Readonly<ResolvedOptions>) {
  const base = profileFor(options.provider, options.level);
  // `systemMessages: "user-text"` allows no system message inside the conversation.
  const profile =
    options.systemMessages === "user-text" && base.systemInConversation === "placed"
      ? Object.freeze({ ...base, systemInConversation: "none" })
      : base;
  // All of them for a request, the structural ones for storage.
  const passes = PASSES.filter((pass) => pass.structural || options.level === "request");
  const walker = new CleanWalk(profile, toolBlocksAsText(profile, options));
  const walk = (messages: readonly unknown[]) => walker.isClean(messages, options.trailing === "keep");

  /**
   * The walk, named `fn` in errors. A hole is the error `repair` throws for it, not a false verdict: checked
   * only once the walk has said false, so the clean path stays one walk.
   */
  const isClean = (messages: readonly unknown[], fn: string) => {
    assertArray(messages, fn);
    if (walk(messages)) return true;
    for (let i = 0; i < messages.length; i++) if (!(i in messages)) throw atMessage(i, HOLE);
    return false;
  };

  const find = (input: readonly unknown[]) => {
    assertArray(input, "findToolCallProblems");
    const ctx = { profile, options };
    const { messages, coerced } = readMessages(input);
    const problems = coerced.map((i) => problem(ctx, "malformed_message", i, COERCED));
    for (const pass of passes) problems.push(...pass.find(messages, ctx));
    problems.sort((a, b) => a.index - b.index);
    if (options.provider !== "strict" && problems.length) {
      // Where each problem lands in what the adapter sends: the index a production error names.
      const { payloadIndex } = payloadPositions(messages, options.provider);
      for (const p of problems) if (payloadIndex[p.index] >= 0) p.payloadIndex = payloadIndex[p.index];
    }
    return problems;
  };

  const repair = <M = BaseMessage>(input: M[]) => {
    if (isClean(input, "repairToolCalls")) return { messages: input, repairs: [] };
    const repairs: ToolCallRepair[] = [];
    const origin = new Map<unknown, number>();
    const ctx: PassContext = {
      profile,
      options,
      callNotes: new Map(),
      derive(from, to) {
        const index = origin.get(from);
        if (index !== undefined && !origin.has(to)) origin.set(to, index);
      },
      report(message, at, problem, action, detail, call) {
        // Built key by key, without undefined fields (deleting them would leave V8 a slow dictionary object).
        // The reported call's fields (`RepairedCall` of ./context), set only when they say something.
        const full: ToolCallRepair = { problem, action, index: origin.get(message) ?? at, detail };
        if (call?.id !== undefined) full.toolCallId = call.id;
        if (call?.name !== undefined) full.toolName = call.name;
        if (call?.newId !== undefined) full.newToolCallId = call.newId;
        if (call?.toolRun !== undefined) full.toolRun = call.toolRun;
        repairs.push(full);
      },
    };
    const { messages, coerced } = readMessages(input);
    for (let i = 0; i < messages.length; i++) origin.set(messages[i], i);
    for (const i of coerced) ctx.report(messages[i], i, "malformed_message", "coerced_message", COERCED);
    let current = messages;
    for (const pass of passes) current = pass.repair(current, ctx);
    // A late pass can change what an earlier one judged (turn-order moves a turn, and the open tool loop it
    // leaves needs the tools-as-text pass). One more round, only when the result is not clean, keeps a repair
    // idempotent: repairing its output changes nothing.
    if (current !== messages && !walk(current)) for (const pass of passes) current = pass.repair(current, ctx);
    if (!repairs.length) return { messages: input, repairs: [] };
    reportRepairsSafely(options.onRepair, repairs);
    return { messages: current as M[], repairs };
  };

  return { isClean, find, repair };
}

/** The engine bound to `options` (validated here: a bad value throws {@link ToolCallRepairInputError}). */
export const createRepairer = boundary("createRepairer", (options?: RepairOptions): Repairer => {
  const resolved = Object.freeze(resolveOptions(options, "createRepairer"));
  const ops = engine(resolved);
  return {
    options: resolved,
    isClean: boundary("isClean", (messages) => ops.isClean(messages, "isClean")),
    find: boundary("findToolCallProblems", ops.find),
    repair: boundary("repairToolCalls", ops.repair),
  };
});

/** Repairs a history (see {@link Repairer.repair}); for many histories, {@link createRepairer} resolves options once. */
export const repairToolCalls = boundary(
  "repairToolCalls",
  <M = BaseMessage>(messages: M[], options?: RepairOptions): RepairResult<M> =>
    engine(resolveOptions(options, "repairToolCalls")).repair(messages),
);

/** Every problem in a history, explained; nothing changed (see {@link Repairer.find}). */
export const findToolCallProblems = boundary(
  "findToolCallProblems",
  (messages: readonly unknown[], options?: FindOptions) =>
    engine(resolveOptions(options, "findToolCallProblems", true)).find(messages),
);

/** Whether `repairToolCalls(messages, options)` would change nothing (`trailing: "keep"`: an open last exchange is fine). */
export const isCleanHistory = boundary(
  "isCleanHistory",
  (
    messages: readonly unknown[],
    options?: Pick<RepairOptions, "provider" | "trailing" | "level" | "systemMessages" | "toolsInRequest">,
  ) => engine(resolveOptions(options, "isCleanHistory")).isClean(messages, "isCleanHistory"),
);
