/**
 * `scanThreads(saver, options)`: the latest checkpoint of every thread (and namespace) a saver holds, judged
 * one at a time and reported as it goes. Nothing is written.
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { BaseCheckpointSaver, CheckpointTuple } from "@langchain/langgraph-checkpoint";
import { assertMethods, boundary, errorText } from "../errors";
import { isMessage } from "../messages/coerce";
import { kind, option, readOptions } from "../options";
import { providerOfThread } from "../models/detect";
import { PROVIDERS, type Provider, type ToolCallProblem } from "../types";
import { mapConcurrently } from "./concurrent";
import { awaitsResume, SAVER_METHODS, storedProblems, type ThreadStatus } from "./repair-thread";
import { configOf, threadSourceFor, type Shard, type ThreadItem, type ThreadKey } from "./source";
import type { StoredCheckpoint } from "./precheck";

/**
 * Where the provider a thread was judged for came from: `option` (`provider` given), `thread` (the model
 * metadata of its latest assistant message that has some), `default` (neither: `"strict"`, every provider's
 * rules; also a thread the pre-check found clean for every provider without reading its metadata).
 */
export type ProviderSource = "option" | "thread" | "default";

export interface ThreadReport extends ThreadKey {
  status: ThreadStatus;
  /** Id of the checkpoint that was read (the thread's latest). */
  checkpointId?: string;
  /** When that checkpoint was written (its `ts`). */
  writtenAt?: string;
  messageCount: number;
  /** Whose rules the thread was judged against (absent when it was not judged: no messages, unreadable). */
  provider?: Provider;
  providerFrom?: ProviderSource;
  /** Every problem `findToolCallProblems` finds for the provider (an exchange awaiting a resume is not one). */
  problems: ToolCallProblem[];
  /** How many of `problems` are structural. */
  structural: number;
  /** Why the thread could not be read. */
  error?: string;
}

export interface ThreadScanOptions {
  /** Only these thread ids (every namespace of each). Default: every thread of the saver. */
  threads?: readonly string[];
  /**
   * Whose rules the report checks. Default: each thread's own, read from the model metadata the LangChain
   * clients store on its latest assistant message (a thread that switched providers is judged for the latest);
   * `"strict"` (all providers) for a thread that has none. Storage repairs are structural whatever this says.
   */
  provider?: Provider;
  /** State key holding the messages. Default `"messages"`. */
  messagesKey?: string;
  /** Only threads whose latest checkpoint was written at or after this time. */
  since?: Date;
  /** At most this many threads. */
  limit?: number;
  /**
   * Only the threads of this shard: those whose id hashes to `index` (1 to `count`) of `count`. Run one process
   * per shard to read a store together; every thread is in exactly one shard.
   */
  shard?: Shard;
  /** Threads read at a time. Default 4. */
  concurrency?: number;
  /** Stops between threads: none starts after it aborts, those under way finish and are reported. */
  signal?: AbortSignal;
}

/** The options as read once: a snapshot with the defaults filled in (`provider` undefined: each thread's own). */
export type ResolvedScanOptions = ReturnType<typeof resolveScanOptions>;

const isCount = (v: unknown): v is number => Number.isInteger(v) && (v as number) > 0;

/** The scan's options, declared with the shared option kinds (`src/options.ts`). */
const SCAN_OPTIONS = {
  threads: kind("an array of thread id strings", (v) => Array.isArray(v) && v.every((t) => typeof t === "string")),
  provider: option.oneOf(PROVIDERS),
  messagesKey: option.name,
  since: kind("a valid Date", (v) => v instanceof Date && !Number.isNaN(+v)),
  limit: kind("a positive integer", isCount),
  shard: kind("{ index, count }: whole numbers, 1 <= index <= count", (v) => {
    const { index, count } = (v ?? {}) as Shard;
    return isCount(index) && isCount(count) && index <= count;
  }),
  concurrency: kind("an integer from 1 to 64", (v) => isCount(v) && v <= 64),
  // Anything with a boolean `aborted`, as an AbortSignal has.
  signal: kind("an AbortSignal", (v) => typeof (v as AbortSignal)?.aborted === "boolean"),
};

/** `repairThreads` takes the scan's options and `apply`. */
export const REPAIR_OPTIONS = { ...SCAN_OPTIONS, apply: option.flag };

/**
 * Checks the saver and the options; throws a {@link ToolCallRepairInputError} (a TypeError) naming `fn` and the
 * argument. Both are read once (the entry's boundary answers for a getter that throws); the resolved options are a
 * snapshot, never the caller's object again.
 */
export function resolveScanOptions(saver: unknown, options: unknown, fn = "scanThreads", table = SCAN_OPTIONS) {
  assertMethods(saver, fn, "saver", "a LangGraph checkpoint saver (getTuple, list, put)", SAVER_METHODS);
  const o = readOptions<ThreadScanOptions & { apply?: boolean }>(options, fn, table);
  return {
    messagesKey: "messages",
    concurrency: 4,
    ...o,
    threads: o.threads && [...o.threads],
    shard: o.shard && { ...o.shard },
  };
}

/** How long a reason may be: one line of a report, whatever the saver threw. */
export const REASON_MAX = 200;

/**
 * Characters that do not print as themselves: controls (C0, DEL, C1), format characters (zero-width, bidi
 * overrides), line and paragraph separators, private-use and unassigned code points, lone surrogates, and
 * U+FFFD (what undecodable bytes became).
 */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Cs}\p{Zl}\p{Zp}\uFFFD]/gu;

/**
 * `text` as one short printable line: its first line, every character that would not print as itself escaped
 * (`\x00`, `\u{fffd}`), cut to `max` characters with `…`. A saver's error can quote the raw bytes of a
 * corrupt blob; this is what a terminal, a CI log and a JSON consumer can show.
 */
export function printableText(text: string, max = REASON_MAX) {
  const line = text.split("\n")[0].replace(UNPRINTABLE, (c) => {
    const hex = c.codePointAt(0)!.toString(16);
    return c === "\t" ? "\\t" : c === "\r" ? "\\r" : hex.length > 2 ? `\\u{${hex}}` : `\\x${hex.padStart(2, "0")}`;
  });
  // Never half of a surrogate pair.
  return line.length <= max ? line : `${line.slice(0, max - 1).replace(/[\uD800-\uDBFF]$/, "")}…`;
}

/** The first line of what a saver threw, with its class (`SyntaxError: ...`), printable and short, for a report. */
export const failureText = (error: unknown) =>
  printableText(
    `${error instanceof Error && typeof error.name === "string" ? `${error.name}: ` : ""}${errorText(error)}`,
  );

export const checkpointIdOf = (tuple?: CheckpointTuple) => {
  const id = tuple?.config?.configurable?.checkpoint_id ?? tuple?.checkpoint?.id;
  return typeof id === "string" ? id : undefined;
};

const report = (key: ThreadKey, fields: Partial<ThreadReport> & Pick<ThreadReport, "status">) => ({
  ...key,
  messageCount: 0,
  problems: [],
  structural: 0,
  ...fields,
});

const unreadable = (key: ThreadKey, error: unknown) => report(key, { status: "unreadable", error: failureText(error) });

/** Judges one thread from its latest checkpoint. */
export function judgeThread(
  key: ThreadKey,
  tuple: CheckpointTuple,
  options: Pick<ResolvedScanOptions, "provider" | "messagesKey">,
) {
  const base = { checkpointId: checkpointIdOf(tuple), writtenAt: tuple.checkpoint?.ts };
  const messages = tuple.checkpoint?.channel_values?.[options.messagesKey] as BaseMessage[];
  if (!Array.isArray(messages)) return report(key, { ...base, status: "no_messages" });
  // Values the serializer could not revive come back as plain objects: that thread is not readable as messages.
  if (!messages.every(isMessage))
    return report(key, {
      ...base,
      status: "unreadable",
      error: `"${options.messagesKey}" holds values that are not LangChain messages (written by another serializer?)`,
    });
  // The provider a thread is judged for: the option, else the thread's own, else strict.
  const own = options.provider ?? providerOfThread(messages);
  const provider = own ?? "strict";
  const structural = storedProblems(messages, provider).length;
  const problems = storedProblems(messages, provider, "request");
  return report(key, {
    ...base,
    provider,
    providerFrom: options.provider ? "option" : own ? "thread" : "default",
    messageCount: messages.length,
    problems,
    structural,
    status: structural ? "broken" : problems.length ? "reshape" : awaitsResume(messages) ? "open" : "clean",
  });
}

/**
 * The latest tuple of a thread the pre-check could not call clean, revived from the page's bytes by the saver's
 * serializer as far as judging needs (its id, `ts` and messages), without reading the thread again. Undefined
 * when those bytes do not revive to a list of messages with a `ts`: that thread is read with `getTuple`, so
 * an unreadable one is reported with the saver's own error, and a missing list as the saver reads it.
 */
async function pageTuple(saver: BaseCheckpointSaver, stored: StoredCheckpoint, key: string) {
  // No blob (type and data null: a thread without the channel) is refused by the serializer, or revives to null.
  // biome-ignore lint/suspicious/noExplicitAny: what the serializer revives, each read checked below
  const value: any = await saver.serde.loadsTyped(stored.type!, stored.data!).catch(() => undefined);
  const whole = stored.holds === "checkpoint";
  const ts = whole ? value?.ts : stored.writtenAt;
  const messages = whole ? value?.channel_values?.[key] : value;
  if (typeof ts !== "string" || !Array.isArray(messages) || !messages.every(isMessage)) return;
  return {
    config: { configurable: { checkpoint_id: stored.checkpointId } },
    checkpoint: { ts, channel_values: { [key]: messages } },
  } as unknown as CheckpointTuple;
}

/** True when the latest checkpoint (written at `ts`) is older than `since` (kept when it has no time). */
const olderThan = (ts: unknown, since?: Date) => since && typeof ts === "string" && Date.parse(ts) < +since;

/**
 * One thread read and judged, with the tuple it was judged from (a thread the pre-check found clean is reported
 * from its verdict: with no provider given it holds for every provider, judged for strict). Undefined for a
 * thread older than `since`. A thread the saver cannot read is reported `unreadable`; `page`: revived from the
 * page's bytes when it can be (what a scan needs; a repair reads the whole tuple).
 */
export async function readThread(
  saver: BaseCheckpointSaver,
  item: ThreadItem,
  o: ResolvedScanOptions,
  page = false,
): Promise<[ThreadReport, CheckpointTuple?] | undefined> {
  const { key, clean, stored } = item;
  if (clean) {
    if (olderThan(clean.writtenAt, o.since)) return;
    const providerFrom = o.provider ? "option" : "default";
    return [report(key, { ...clean, provider: o.provider ?? "strict", providerFrom, status: "clean" })];
  }
  let tuple: CheckpointTuple | undefined;
  try {
    if (item.error !== undefined) throw item.error;
    tuple =
      (page && stored && (await pageTuple(saver, stored, o.messagesKey))) ||
      (item.tuple ?? (await saver.getTuple(configOf(key))));
  } catch (error) {
    return [unreadable(key, error)];
  }
  return tuple && !olderThan(tuple.checkpoint?.ts, o.since) ? [judgeThread(key, tuple, o), tuple] : undefined;
}

/** The source, the reads and the stop rule shared by scans and repairs. */
export const readThreads = <R>(
  saver: BaseCheckpointSaver,
  o: ResolvedScanOptions,
  handle: (item: ThreadItem) => Promise<R | undefined>,
  stop: () => boolean,
) => mapConcurrently(threadSourceFor(saver, o), o.concurrency, handle, () => stop() || !!o.signal?.aborted);

/**
 * Reports every thread of `saver` (or `options.threads`), newest checkpoint of each namespace, one report per
 * thread as it is read. Memory does not grow with the number of threads (SQLite and PostgreSQL savers are read
 * a page of threads at a time, and a thread the pre-check finds clean is reported without reviving its messages;
 * other savers through `list({})` keep the set of keys they have seen).
 */
export const scanThreads = boundary(
  "scanThreads",
  (saver: BaseCheckpointSaver, options: ThreadScanOptions = {}): AsyncGenerator<ThreadReport> => {
    // Checked at the call, before the first step: a bad saver or option throws here, naming it.
    const o = resolveScanOptions(saver, options);
    let reported = 0;
    const full = () => reported === o.limit;
    const judge = (item: ThreadItem) =>
      readThread(saver, item, o, true).then(
        (read) => read?.[0],
        (error) => unreadable(item.key, error),
      );
    return (async function* () {
      for await (const thread of readThreads(saver, o, judge, full)) {
        reported++;
        yield thread;
        if (full()) break;
      }
    })();
  },
);
