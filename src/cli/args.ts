/**
 * Command line of `langgraph-tool-repair` (node:util parseArgs, no dependency). Everything is checked here,
 * so that a mistake is a usage error (exit 2) before anything connects.
 */
import { parseArgs } from "node:util";
import { PROVIDERS, type Provider } from "../types";
import { nearestName } from "../values";
import type { Shard } from "../threads/source";

export class UsageError extends Error {
  override name = "UsageError";
}

export type StoreArgs =
  | { kind: "sqlite"; file: string }
  | { kind: "postgres"; url: string }
  | { kind: "saver"; module: string; exportName?: string };

export interface CliArgs {
  command: "scan" | "repair";
  store: StoreArgs;
  /**
   * The connection flags as shell words, to print a next command: `--postgres` as `env:NAME` when given so,
   * else `<URL>`, and `--saver-options` as `<JSON>` (neither is ever printed).
   */
  storeFlags: string[];
  /**
   * The flags given that choose what is read and judged (`--thread` per id, `--provider`, `--messages-key`,
   * `--since` as typed), as shell words: a next command works on the same threads.
   */
  selectionFlags: string[];
  saverOptions?: Record<string, unknown>;
  threads?: string[];
  /** Undefined: each thread is judged for its own model's provider (strict when its messages name none). */
  provider?: Provider;
  messagesKey: string;
  json: boolean;
  apply: boolean;
  since?: Date;
  limit?: number;
  /** Only the threads of this shard (`--shard i/n`). */
  shard?: Shard;
  concurrency: number;
}

export type ParsedCommand = { help: true } | { version: true } | CliArgs;

export const HELP = `langgraph-tool-repair: find and fix LangGraph threads whose tool calls and results no longer match

Usage:
  langgraph-tool-repair scan   <store> [options]   report broken threads (nothing is written)
  langgraph-tool-repair repair <store> [options]   show the fix of each broken thread (dry run)
  langgraph-tool-repair repair <store> --apply     write each fix as a new checkpoint on top of its thread

Store (exactly one):
  --sqlite FILE                  a SqliteSaver database (@langchain/langgraph-checkpoint-sqlite)
  --postgres URL                 a PostgresSaver database (@langchain/langgraph-checkpoint-postgres);
                                 env:NAME reads the URL from environment variable NAME
  --saver MODULE[:EXPORT]        any other saver: a saver, a factory (options) => saver, or a class
  --saver-options JSON           options for --saver (and for PostgresSaver, e.g. {"schema":"app"})

Options:
  --thread ID                    only this thread (repeat, or list ids after the command)
  --provider NAME                rules to judge against: ${PROVIDERS.join(", ")} (default: each
                                 thread's own model, read from its latest AI message; strict when it names none)
  --messages-key KEY             state key of the messages (default messages)
  --since WHEN                   only threads written since an ISO date or a duration (30m, 12h, 7d, 2w)
  --limit N                      scan: at most N threads; repair: at most N threads repaired
  --shard I/N                    only shard I of N (1 <= I <= N): run N processes, one per shard, to read the
                                 store together; every thread is in exactly one shard (a hash of its id)
  --concurrency N                threads read and repaired at a time (default 4)
  --json                         one JSON line per thread instead of the summary
  --apply                        repair: write the fixes (default: dry run)
  -h, --help, -v, --version

Exit codes: 0 nothing broken, 1 broken threads found (scan, dry run), failed or skipped repairs, or a
repair stopped at --limit (run again), 2 usage or connection error, 130 stopped by Ctrl-C (run again).
`;

const DURATION = /^(\d+)(s|m|h|d|w)$/;
const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** An ISO date (or date and time), or a duration back from `now`. */
export function parseSince(text: string, now: Date): Date {
  const duration = DURATION.exec(text.trim());
  if (duration) return new Date(now.getTime() - Number(duration[1]) * UNIT_MS[duration[2]]);
  const time = Date.parse(text);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(time))
    throw new UsageError(
      `--since: "${text}" is neither an ISO date (2026-05-01, 2026-05-01T12:00Z) nor a duration (30m, 12h, 7d, 2w)`,
    );
  return new Date(time);
}

/** `text` as one shell word: as it is when it is made of safe characters, else single-quoted. */
export function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}

/** A flag and its value as shell words; a value that starts with "-" as `--flag=value` (else read as a flag). */
const flag = (name: string, value: string): string[] =>
  value.startsWith("-") ? [`${name}=${shellWord(value)}`] : [name, shellWord(value)];

function positiveInteger(flag: string, text: string | undefined, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < 1 || value > max)
    throw new UsageError(`${flag}: expected a whole number from 1 to ${max}, got "${text}"`);
  return value;
}

/** `I/N`: shard I of N, both whole numbers, 1 <= I <= N. */
export function parseShard(text: string): Shard {
  const match = /^(\d+)\/(\d+)$/.exec(text.trim());
  const [index, count] = match ? [Number(match[1]), Number(match[2])] : [0, 0];
  if (!match || index < 1 || count < 1 || index > count || count > 1_000_000)
    throw new UsageError(`--shard: expected I/N with 1 <= I <= N (e.g. 1/4), got "${text}"`);
  return { index, count };
}

/** `MODULE[:EXPORT]`: the export is the part after the last colon when it is an identifier (not `C:\\`). */
export function parseSaverSpec(spec: string): { module: string; exportName?: string } {
  const at = spec.lastIndexOf(":");
  const exportName = at > 0 ? spec.slice(at + 1) : "";
  if (at > 1 && /^[A-Za-z_$][\w$]*$/.test(exportName)) return { module: spec.slice(0, at), exportName };
  return { module: spec };
}

const OPTIONS = {
  sqlite: { type: "string" },
  postgres: { type: "string" },
  saver: { type: "string" },
  "saver-options": { type: "string" },
  thread: { type: "string", multiple: true },
  provider: { type: "string" },
  "messages-key": { type: "string" },
  json: { type: "boolean" },
  apply: { type: "boolean" },
  since: { type: "string" },
  limit: { type: "string" },
  concurrency: { type: "string" },
  shard: { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
} as const;

/** parseArgs' error, said as the command's other usage errors are; an unknown flag names the nearest known one. */
function parseArgsError(error: Error & { code?: string }): string {
  const unknown =
    error.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" ? /^Unknown option '(.*)'\. /.exec(error.message) : null;
  if (!unknown) return error.message;
  const near = nearestName(unknown[1].replace(/^-+/, ""), Object.keys(OPTIONS));
  return `unknown option ${unknown[1]}${near ? ` (did you mean --${near}?)` : ""}`;
}

export function parseCliArgs(
  argv: string[],
  env: Record<string, string | undefined> = {},
  now = new Date(),
): ParsedCommand {
  // biome-ignore lint/suspicious/noImplicitAnyLet: parseArgs infers its result from OPTIONS
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, strict: true, options: OPTIONS });
  } catch (error) {
    // parseArgs names the flag; it never echoes a value.
    throw new UsageError(parseArgsError(error as Error & { code?: string }));
  }
  const { values, positionals } = parsed;
  if (values.help) return { help: true };
  if (values.version) return { version: true };

  const [command, ...rest] = positionals;
  if (command !== "scan" && command !== "repair")
    throw new UsageError(
      command === undefined ? "no command: use scan or repair" : `unknown command "${command}": use scan or repair`,
    );
  if (rest.length > 0 && !values.thread)
    throw new UsageError("unexpected argument after the command (thread ids go after --thread)");
  if (values.apply && command !== "repair") throw new UsageError("--apply belongs to repair");

  const stores = (["sqlite", "postgres", "saver"] as const).filter((flag) => values[flag] !== undefined);
  if (stores.length !== 1)
    throw new UsageError(
      stores.length === 0
        ? "no store: give --sqlite FILE, --postgres URL or --saver MODULE"
        : `give one store, not ${stores.map((s) => `--${s}`).join(" and ")}`,
    );
  let store: StoreArgs;
  let storeFlags: string[];
  if (values.sqlite !== undefined) {
    if (values.sqlite === "") throw new UsageError("--sqlite: empty file name");
    store = { kind: "sqlite", file: values.sqlite };
    storeFlags = flag("--sqlite", values.sqlite);
  } else if (values.postgres !== undefined) {
    let url = values.postgres;
    storeFlags = url.startsWith("env:") ? flag("--postgres", url) : ["--postgres", "<URL>"];
    if (url.startsWith("env:")) {
      const name = url.slice(4);
      url = env[name] ?? "";
      if (!url) throw new UsageError(`--postgres env:${name}: environment variable ${name} is not set`);
    }
    if (!/^postgres(ql)?:\/\//.test(url))
      throw new UsageError("--postgres: expected a postgres:// or postgresql:// URL (or env:NAME)");
    store = { kind: "postgres", url };
  } else {
    const spec = values.saver!;
    if (spec === "") throw new UsageError("--saver: empty module name");
    store = { kind: "saver", ...parseSaverSpec(spec) };
    storeFlags = flag("--saver", spec);
  }

  let saverOptions: Record<string, unknown> | undefined;
  if (values["saver-options"] !== undefined) {
    if (store.kind === "sqlite") throw new UsageError("--saver-options applies to --saver and --postgres");
    try {
      saverOptions = JSON.parse(values["saver-options"]);
    } catch {
      throw new UsageError("--saver-options: not valid JSON");
    }
    if (typeof saverOptions !== "object" || saverOptions === null || Array.isArray(saverOptions))
      throw new UsageError("--saver-options: expected a JSON object");
    storeFlags.push("--saver-options", "<JSON>");
  }

  const provider = values.provider as Provider | undefined;
  if (provider !== undefined && !PROVIDERS.includes(provider))
    throw new UsageError(`--provider: "${values.provider}" is not one of ${PROVIDERS.join(", ")}`);
  const messagesKey = values["messages-key"] ?? "messages";
  if (messagesKey === "") throw new UsageError("--messages-key: empty key");
  const threads = values.thread ? [...values.thread, ...rest] : undefined;
  if (threads?.some((t) => t === "")) throw new UsageError("--thread: empty thread id");
  const since = values.since === undefined ? undefined : parseSince(values.since, now);
  const shard = values.shard === undefined ? undefined : parseShard(values.shard);
  const selectionFlags = [
    ...(threads ?? []).flatMap((thread) => flag("--thread", thread)),
    ...(provider !== undefined ? flag("--provider", provider) : []),
    ...(values["messages-key"] !== undefined ? flag("--messages-key", messagesKey) : []),
    ...(values.since !== undefined ? flag("--since", values.since) : []),
    ...(shard ? ["--shard", `${shard.index}/${shard.count}`] : []),
  ];

  return {
    command,
    store,
    storeFlags,
    selectionFlags,
    saverOptions,
    threads,
    provider,
    messagesKey,
    json: values.json === true,
    apply: values.apply === true,
    since,
    limit: positiveInteger("--limit", values.limit),
    shard,
    concurrency: positiveInteger("--concurrency", values.concurrency, 64) ?? 4,
  };
}
