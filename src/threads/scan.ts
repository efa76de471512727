/**
 * `scanThreads(saver, options)`: the latest checkpoint of every thread (and namespace) a saver holds, judged
 * one at a time and reported as it goes. Nothing is written.
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { BaseCheckpointSaver, CheckpointTuple } from "@langchain/langgraph-checkpoint";
import { assertMethods, boundary, errorText } from "../errors";
import { isMessage } from "../messages/coerce";
import { option, readOptions, type OptionTable } from "../options";
import { providerOfThread } from "../models/detect";
import { PROVIDERS, type Provider, type ToolCallProblem } from "../types";
import { mapConcurrently } from "./concurrent";
import {
  awaitsResume,
  SAVER_METHODS,
  storedThreadProblems,
  structuralProblems,
  type ThreadStatus,
} from "./repair-thread";
import { threadSourceFor, type Shard, type ThreadItem, type ThreadKey } from "./source";
import type { CleanThread, StoredCheckpoint } from "./precheck";

export type { ThreadStatus };

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
export type ResolvedScanOptions = ThreadScanOptions & { messagesKey: string; concurrency: number; apply?: boolean };

const isPositiveInteger = (value: unknown) => typeof value === "number" && Number.isInteger(value) && value > 0;

const isShard = (v: unknown) => {
  const shard = v as Shard | null | undefined;
  return isPositiveInteger(shard?.index) && isPositiveInteger(shard?.count) && shard!.index <= shard!.count;
};

/** The scan's options, declared with the shared option kinds (`src/options.ts`). */
const SCAN_OPTIONS = {
  threads: {
    expected: "an array of thread id strings",
    accepts: (v: unknown) => Array.isArray(v) && v.every((t) => typeof t === "string"),
  },
  provider: option.oneOf(PROVIDERS),
  messagesKey: option.name,
  since: { expected: "a valid Date", accepts: (v: unknown) => v instanceof Date && !Number.isNaN(v.getTime()) },
  limit: { expected: "a positive integer", accepts: isPositiveInteger },
  shard: { expected: "{ index, count }: whole numbers, 1 <= index <= count", accepts: isShard },
  concurrency: {
    expected: "an integer from 1 to 64",
    accepts: (v: unknown) => isPositiveInteger(v) && Number(v) <= 64,
  },
  // Anything with a boolean `aborted`, as an AbortSignal has.
  signal: { expected: "an AbortSignal", accepts: (v: unknown) => typeof (v as AbortSignal)?.aborted === "boolean" },
} satisfies OptionTable;

/** `repairThreads` takes the scan's options and `apply`. */
export const REPAIR_OPTIONS = { ...SCAN_OPTIONS, apply: option.flag } satisfies OptionTable;

/**
 * Checks the saver and the options; throws a {@link ToolCallRepairInputError} (a TypeError) naming `fn` and the
 * argument. Both are read once (the entry's boundary answers for a getter that throws); the resolved options are a
 * snapshot, never the caller's object again.
 */
export function resolveScanOptions(
  saver: unknown,
  options: ThreadScanOptions | undefined,
  fn = "scanThreads",
  table: OptionTable = SCAN_OPTIONS,
): ResolvedScanOptions {
  assertMethods(saver, fn, "saver", "a LangGraph checkpoint saver (getTuple, list, put)", SAVER_METHODS);
  const o = readOptions<ResolvedScanOptions>(options, fn, table);
  return {
    ...o,
    threads: o.threads && [...o.threads],
    shard: o.shard && { index: o.shard.index, count: o.shard.count },
    messagesKey: o.messagesKey ?? "messages",
    concurrency: o.concurrency ?? 4,
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

const escapeChar = (char: string): string => {
  const code = char.codePointAt(0)!;
  if (char === "\t") return "\\t";
  if (char === "\r") return "\\r";
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u{${code.toString(16)}}`;
};

/**
 * `text` as one short printable line: its first line, every character that would not print as itself escaped
 * (`\x00`, `\u{fffd}`), cut to `max` characters with `…`. A saver's error can quote the raw bytes of a
 * corrupt blob; this is what a terminal, a CI log and a JSON consumer can show.
 */
export function printableText(text: string, max = REASON_MAX): string {
  const line = text.split("\n")[0].replace(UNPRINTABLE, escapeChar);
  if (line.length <= max) return line;
  const cut = line.slice(0, max - 1);
  return `${/[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut}…`; // never half of a surrogate pair
}

/** The first line of what a saver threw, with its class (`SyntaxError: ...`), printable and short, for a report. */
export const failureText = (error: unknown): string =>
  printableText(
    `${error instanceof Error && typeof error.name === "string" ? `${error.name}: ` : ""}${errorText(error)}`,
  );

export const checkpointIdOf = (tuple: CheckpointTuple | undefined): string | undefined => {
  const id =
    (tuple?.config?.configurable as Record<string, unknown> | undefined)?.checkpoint_id ?? tuple?.checkpoint?.id;
  return typeof id === "string" ? id : undefined;
};

/** The messages of a checkpoint, or a reason why there are none to judge. */
export function messagesOf(
  tuple: CheckpointTuple,
  messagesKey: string,
): { messages: BaseMessage[] } | { status: "no_messages" | "unreadable"; error?: string } {
  const value = (tuple.checkpoint?.channel_values as Record<string, unknown> | undefined)?.[messagesKey];
  if (!Array.isArray(value)) return { status: "no_messages" };
  // Values the serializer could not revive come back as plain objects: that thread is not readable as messages.
  if (!value.every(isMessage))
    return {
      status: "unreadable",
      error: `"${messagesKey}" holds values that are not LangChain messages (written by another serializer?)`,
    };
  return { messages: value as BaseMessage[] };
}

const report = (key: ThreadKey, fields: Partial<ThreadReport> & Pick<ThreadReport, "status">): ThreadReport => ({
  ...key,
  messageCount: 0,
  problems: [],
  structural: 0,
  ...fields,
});

/** Judges one thread from its latest checkpoint. */
export function judgeThread(
  key: ThreadKey,
  tuple: CheckpointTuple,
  options: Pick<ResolvedScanOptions, "provider" | "messagesKey">,
): ThreadReport {
  const base = { checkpointId: checkpointIdOf(tuple), writtenAt: tuple.checkpoint?.ts };
  const read = messagesOf(tuple, options.messagesKey);
  if (!("messages" in read)) return report(key, { ...base, ...read });
  const { messages } = read;
  // The provider a thread is judged for: the option, else the thread's own, else strict.
  const own = options.provider ?? providerOfThread(messages);
  const provider = own ?? "strict";
  const providerFrom: ProviderSource = options.provider ? "option" : own ? "thread" : "default";
  const structural = structuralProblems(messages, provider).length;
  const problems = storedThreadProblems(messages, provider);
  const status: ThreadStatus =
    structural > 0 ? "broken" : problems.length > 0 ? "reshape" : awaitsResume(messages) ? "open" : "clean";
  return report(key, { ...base, provider, providerFrom, messageCount: messages.length, problems, structural, status });
}

/**
 * The report of a thread the pre-check found clean: what judgeThread reports for it, without its messages
 * (with no provider given, the pre-check's verdict holds for every provider: judged for strict).
 */
export const cleanReport = (key: ThreadKey, clean: CleanThread, option: Provider | undefined): ThreadReport =>
  report(key, {
    ...clean,
    provider: option ?? "strict",
    providerFrom: option !== undefined ? "option" : "default",
    status: "clean",
  });

/** The latest tuple of a thread, as the source gave it or read with `getTuple`. */
export async function latestTuple(saver: BaseCheckpointSaver, item: ThreadItem): Promise<CheckpointTuple | undefined> {
  if (item.error !== undefined) throw item.error;
  return (
    item.tuple ?? saver.getTuple({ configurable: { thread_id: item.key.threadId, checkpoint_ns: item.key.namespace } })
  );
}

/**
 * The latest tuple of a thread the pre-check could not call clean, revived from the page's bytes by the saver's
 * serializer as far as judging needs (its id, `ts` and messages), without reading the thread again. Undefined
 * when those bytes do not revive to a list of messages with a `ts`: that thread is read with `getTuple`, so
 * an unreadable one is reported with the saver's own error, and a missing list as the saver reads it.
 */
async function pageTuple(
  saver: BaseCheckpointSaver,
  stored: StoredCheckpoint,
  messagesKey: string,
): Promise<CheckpointTuple | undefined> {
  if (stored.type === null || stored.data === null) return undefined;
  // biome-ignore lint/suspicious/noExplicitAny: what the serializer revives, each read checked below
  const value: any = await saver.serde.loadsTyped(stored.type, stored.data).catch(() => undefined);
  const whole = stored.holds === "checkpoint";
  const ts = whole ? value?.ts : stored.writtenAt;
  const messages = whole ? value?.channel_values?.[messagesKey] : value;
  if (typeof ts !== "string" || !Array.isArray(messages) || !messages.every(isMessage)) return undefined;
  return {
    config: { configurable: { checkpoint_id: stored.checkpointId } },
    checkpoint: { ts, channel_values: { [messagesKey]: messages } },
  } as unknown as CheckpointTuple;
}

/** True when the latest checkpoint (written at `ts`) is older than `since` (kept when it has no time). */
export function olderThan(ts: unknown, since: Date | undefined): boolean {
  if (!since || typeof ts !== "string") return false;
  const written = Date.parse(ts);
  return !Number.isNaN(written) && written < since.getTime();
}

/**
 * The source, the reads and the stop rule shared by scans and repairs. A thread the pre-check found clean but
 * older than `since` is passed over.
 */
export async function* readThreads<R>(
  saver: BaseCheckpointSaver,
  options: ResolvedScanOptions,
  handle: (item: ThreadItem) => Promise<R | undefined>,
  stop: () => boolean,
): AsyncGenerator<R> {
  const threads = await threadSourceFor(saver, options);
  const stopped = () => stop() || options.signal?.aborted === true;
  const handleNewer = async (item: ThreadItem) =>
    item.clean && olderThan(item.clean.writtenAt, options.since) ? undefined : handle(item);
  for await (const result of mapConcurrently(threads.items(), options.concurrency, handleNewer, stopped))
    if (result !== undefined) yield result;
}

/**
 * Reports every thread of `saver` (or `options.threads`), newest checkpoint of each namespace, one report per
 * thread as it is read. Memory does not grow with the number of threads (SQLite and PostgreSQL savers are read
 * a page of threads at a time, and a thread the pre-check finds clean is reported without reviving its messages;
 * other savers through `list({})` keep the set of keys they have seen).
 */
export const scanThreads = boundary(
  "scanThreads",
  (saver: BaseCheckpointSaver, options: ThreadScanOptions = {}): AsyncGenerator<ThreadReport> =>
    // Checked at the call, before the first step: a bad saver or option throws here, naming it.
    scanResolved(saver, resolveScanOptions(saver, options, "scanThreads")),
);

async function* scanResolved(saver: BaseCheckpointSaver, resolved: ResolvedScanOptions): AsyncGenerator<ThreadReport> {
  let reported = 0;
  const judge = async (item: ThreadItem): Promise<ThreadReport | undefined> => {
    if (item.clean) return cleanReport(item.key, item.clean, resolved.provider);
    try {
      const tuple =
        (item.stored && (await pageTuple(saver, item.stored, resolved.messagesKey))) ||
        (await latestTuple(saver, item));
      return tuple && !olderThan(tuple.checkpoint?.ts, resolved.since)
        ? judgeThread(item.key, tuple, resolved)
        : undefined;
    } catch (error) {
      return report(item.key, { status: "unreadable", error: failureText(error) });
    }
  };
  const full = () => resolved.limit !== undefined && reported >= resolved.limit;
  for await (const report of readThreads(saver, resolved, judge, full)) {
    if (full()) break;
    reported++;
    yield report;
    if (full()) break;
  }
}

/** How many threads `scanThreads` / `repairThreads` would read, when the saver can count them cheaply. */
export async function countThreads(
  saver: BaseCheckpointSaver,
  options: Pick<ThreadScanOptions, "threads" | "since" | "shard"> = {},
): Promise<number | undefined> {
  const resolved = resolveScanOptions(saver, options, "countThreads");
  if (resolved.threads) return undefined; // each id may have several namespaces
  return (await threadSourceFor(saver, { since: resolved.since, shard: resolved.shard })).count();
}
