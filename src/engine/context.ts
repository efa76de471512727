/**
 * What every pass receives: the provider profile, the resolved options, and a way to report repairs with
 * the index the message had in the caller's input (passes run one after another on intermediate arrays).
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { ResolvedOptions } from "./options";
import type { ProviderProfile } from "./profiles";
import type { ToolCallProblem, ToolCallProblemKind, ToolCallRepair } from "../types";

export type { ResolvedOptions };

export interface FindContext {
  profile: ProviderProfile;
  options: ResolvedOptions;
  /** Whether an open trailing exchange is reported (false for storage layers that keep it). */
  trailingIsProblem: boolean;
}

export interface PassContext extends FindContext {
  /** Records a repair. `message` is the message concerned in the pass's input, `at` its index there. */
  report(repair: Omit<ToolCallRepair, "index">, message: unknown, at: number): void;
  /** Records that `to` replaces `from`, so later reports name the caller's index. */
  derive(from: unknown, to: unknown): void;
  /** Reasons for calls that passes want the synthetic result to name (invalid calls carry their parse error). */
  callNotes: Map<string, string>;
}

/** One named pass of the pipeline: it classifies with `find` and mutates with `repair` (same classification). */
export interface RepairPass {
  name: string;
  /** Whether the pass runs at the structural level too (false: request shaping only). */
  structural: boolean;
  /** Problems in `messages`, indexes into `messages`. Pure. */
  find(messages: readonly BaseMessage[], ctx: FindContext): ToolCallProblem[];
  /** The repaired list: the very same array when the pass has nothing to do. */
  repair(messages: BaseMessage[], ctx: PassContext): BaseMessage[];
}

export function problem(
  ctx: FindContext,
  kind: ToolCallProblemKind,
  index: number,
  detail: string,
  call?: { id?: string; name?: string },
): ToolCallProblem {
  const p: ToolCallProblem = { kind, index, rules: ctx.profile.rules[kind] ?? [], detail };
  if (call?.id !== undefined) p.toolCallId = call.id;
  if (call?.name !== undefined) p.toolName = call.name;
  return p;
}

/** Replaces the array only when something changed, keeping the input's identity otherwise. */
export function sameOrNew(input: BaseMessage[], output: BaseMessage[]): BaseMessage[] {
  if (input.length !== output.length) return output;
  for (let i = 0; i < input.length; i++) if (input[i] !== output[i]) return output;
  return input;
}

/** Appends `value` to the list stored under `key`, creating it (no spread: linear in the total). */
export function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/**
 * The messages at the indexes found, each rebuilt by `rebuild` (which reports it) and derived from its original;
 * the very same array when nothing was found.
 */
export function rebuildAt<F extends { index: number }>(
  messages: BaseMessage[],
  found: readonly F[],
  ctx: PassContext,
  rebuild: (message: BaseMessage, finding: F) => BaseMessage,
): BaseMessage[] {
  if (found.length === 0) return messages;
  const out = messages.slice();
  for (const f of found) {
    out[f.index] = rebuild(messages[f.index], f);
    ctx.derive(messages[f.index], out[f.index]);
  }
  return sameOrNew(messages, out);
}
