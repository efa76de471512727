/**
 * What every pass receives: the provider profile, the resolved options, and a way to report repairs with
 * the index the message had in the caller's input (passes run one after another on intermediate arrays).
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { ResolvedOptions } from "./options";
import type { ProviderProfile } from "./profiles";
import type { ToolCallProblem, ToolCallProblemKind, ToolCallRepair, ToolRunState } from "../types";
import { isDict, type Turn } from "../messages/inspect";

export interface FindContext {
  profile: ProviderProfile;
  options: ResolvedOptions;
}

/** The call a repair concerns, where there is one: its id and name, its new id (renamed), what is known of its run. */
export interface RepairedCall {
  id?: string;
  name?: string;
  newId?: string;
  toolRun?: ToolRunState;
}

export interface PassContext extends FindContext {
  /** Records a repair. `message` is the message concerned in the pass's input, `at` its index there. */
  report(
    message: unknown,
    at: number,
    problem: ToolCallRepair["problem"],
    action: ToolCallRepair["action"],
    detail: string,
    call?: RepairedCall,
  ): void;
  /** Records that `to` replaces `from`, so later reports name the caller's index. */
  derive(from: unknown, to: unknown): void;
  /** Reasons for calls that passes want the synthetic result to name (invalid calls carry their parse error). */
  callNotes: Map<string, string>;
}

/** One pass of the pipeline: it classifies with `find` and mutates with `repair` (same classification). */
export interface RepairPass {
  /** Whether the pass runs at the structural level too (false: request shaping only). */
  structural: boolean;
  /** The pass's rules for the clean walk (`engine/clean.ts`), made once per walker; none when the profile needs none. */
  clean?(walk: Walk): CleanCheck | undefined;
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
  call?: RepairedCall,
) {
  const p: ToolCallProblem = { kind, index, rules: ctx.profile.rules[kind] ?? [], detail };
  if (call?.id !== undefined) p.toolCallId = call.id;
  if (call?.name !== undefined) p.toolName = call.name;
  return p;
}

/** A call in a sentence: its id and the tool it calls. */
export const callNamed = (call: RepairedCall) => `${call.id ?? "(no id)"}${call.name ? ` to "${call.name}"` : ""}`;

/** What `judge` finds in each message (a falsy answer: nothing), in order. */
export function findEach<F>(
  messages: readonly BaseMessage[],
  judge: (message: BaseMessage, index: number) => F | false | undefined,
) {
  const found: F[] = [];
  for (let index = 0; index < messages.length; index++) {
    const f = judge(messages[index], index);
    if (f) found.push(f);
  }
  return found;
}

/** Replaces the array only when something changed, keeping the input's identity otherwise. */
export function sameOrNew(input: BaseMessage[], output: BaseMessage[]) {
  if (input.length !== output.length) return output;
  for (let i = 0; i < input.length; i++) if (input[i] !== output[i]) return output;
  return input;
}

/** Arguments as a record: a record itself, or a JSON string that parses to one; none otherwise. */
export function argsRecord(raw: unknown) {
  try {
    raw = typeof raw === "string" ? JSON.parse(raw) : raw;
  } catch {}
  return isDict(raw) ? raw : undefined;
}

/** Appends `value` to the list stored under `key`, creating it (no spread: linear in the total). */
export function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V) {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** What a finding is, to `find` and to `repair` alike: its problem, the repair's action, the sentence, the call. */
export type Issue = [kind: ToolCallProblemKind, action: ToolCallRepair["action"], detail: string, call?: RepairedCall];

/**
 * A pass that rebuilds each message it finds: `classify` finds them, `issues` says what each finding is (a problem
 * for `find`, unless the pass words its own, and a report for `repair`), `rebuild` makes the new message (none: the
 * message goes). `repair` returns the very same array when nothing was found.
 */
export function rebuildingPass<F extends { index: number }>({
  classify,
  issues,
  rebuild,
  ...pass
}: Omit<RepairPass, "find" | "repair"> &
  Partial<Pick<RepairPass, "find">> & {
    classify(messages: readonly BaseMessage[], ctx: FindContext): F[];
    issues(finding: F, ctx: FindContext): Issue[];
    rebuild(message: BaseMessage, finding: F, ctx: PassContext): BaseMessage | undefined;
  }): RepairPass {
  return {
    find: (messages, ctx) =>
      classify(messages, ctx).flatMap((f) =>
        issues(f, ctx).map(([kind, , detail, call]) => problem(ctx, kind, f.index, detail, call)),
      ),
    repair(messages, ctx) {
      const found = classify(messages, ctx);
      if (!found.length) return messages;
      const out: (BaseMessage | undefined)[] = messages.slice();
      let removed = false;
      for (const f of found) {
        const message = messages[f.index];
        for (const [kind, action, detail, call] of issues(f, ctx))
          ctx.report(message, f.index, kind, action, detail, call);
        out[f.index] = rebuild(message, f, ctx);
        if (out[f.index]) ctx.derive(message, out[f.index]);
        else removed = true;
      }
      return sameOrNew(messages, removed ? out.filter((m) => m !== undefined) : (out as BaseMessage[]));
    },
    ...pass,
  };
}

/** Fields read without checks on the hot path (each read is checked by its use, after the shape pass's check). */
// biome-ignore lint/suspicious/noExplicitAny: the walk reads fields of messages of any shape without a cast per read
export type Loose = Record<string, any>;

/**
 * A pass's rules as the clean walk asks them, message by message, allocating nothing per message: `start` before
 * each walk; `visit` (every message) and `ai` (assistant messages, after every `visit`) false as soon as the pass
 * would change something at message `i`; `end` false when the whole history would still be changed. Closures, not
 * methods: the walk calls them without `this`.
 */
export interface CleanCheck {
  start?: () => void;
  /** `turn`: the message's turn (`turnOf` of messages/inspect), read once for every check. */
  visit?: (m: Loose, i: number, turn: Turn) => boolean;
  ai?: (m: Loose, i: number) => boolean;
  end?: () => boolean;
}

/** What the clean walk shares with the checks: the history walked, and the calls of the current exchange. */
export interface Walk {
  readonly profile: ProviderProfile;
  /** The request carries no tools where the provider needs them: every call or result is to be repaired (tools-as-text). */
  readonly toolsAsText: boolean;
  /** An open trailing exchange is fine (storage layers keep it for a resume). */
  trailingAllowed: boolean;
  messages: readonly Loose[];
  readonly open: OpenCalls;
}

/** Past this many calls in one message, calls are found through a map instead of a scan. */
const SCAN_LIMIT = 8;

/**
 * The calls of the current exchange, in `tool_calls` order (opened by the pairing pass's check): which are still
 * waiting for a result, and which locations have already named each one (a bit per location). Found by a short
 * scan while the exchange is small, through a map past {@link SCAN_LIMIT} calls, so a fan-out of 100,000 calls
 * stays linear.
 */
export class OpenCalls {
  private ids: unknown[] = [];
  private answered: boolean[] = [];
  private named: number[] = [];
  private index = new Map<unknown, number>();
  /** Entries of the current assistant message (unanswerable server tools included). */
  private n = 0;
  /** Its calls in `tool_calls`. */
  count = 0;
  /** Of all entries, still unanswered. */
  waiting = 0;

  reset() {
    this.n = this.count = this.waiting = 0;
    if (this.index.size) this.index.clear();
  }

  /** Opens a call; `server`: an unanswered server tool, which no result answers and no location names. */
  add(id: unknown, server = false) {
    const i = this.n++;
    this.ids[i] = id;
    this.answered[i] = server;
    this.named[i] = server ? -1 : 0;
    this.waiting++;
    if (!server) this.count++;
    if (this.n > SCAN_LIMIT) {
      if (this.n === SCAN_LIMIT + 1)
        for (let k = 0; k < i; k++) if (!this.index.has(this.ids[k])) this.index.set(this.ids[k], k);
      if (!this.index.has(id)) this.index.set(id, i);
    }
  }

  private indexOf(id: unknown) {
    if (this.n > SCAN_LIMIT) return this.index.get(id) ?? -1;
    for (let i = 0; i < this.n; i++) if (this.ids[i] === id) return i;
    return -1;
  }

  /** Whether `id` names a call that `location` (a bit) has not named yet (and marks it named there). */
  claim(id: unknown, location: number) {
    const i = this.indexOf(id);
    if (i < 0 || (this.named[i] & location) !== 0) return false;
    this.named[i] |= location;
    return true;
  }

  /** Marks `id` answered; false when it is not a waiting call of this exchange. */
  answer(id: unknown) {
    const i = this.indexOf(id);
    if (i < 0 || this.answered[i]) return false;
    this.answered[i] = true;
    this.waiting--;
    return true;
  }
}
