/**
 * Command line of `langgraph-tool-repair` (node:util parseArgs, no dependency). Everything is checked here,
 * so that a mistake is a usage error (exit 2) before anything connects.
 */
import { parseArgs } from "node:util";
import type { Shard } from "../threads/source";
import { PROVIDERS, type Provider } from "../types";
import { nearestName } from "../values";

export class UsageError extends Error {
  override name = "UsageError";
}

export type StoreArgs =
  | { kind: "sqlite"; file: string }
  | { kind: "postgres"; url: string }
  | { kind: "saver"; module: string; exportName?: string };

/** The flags, as parseArgs reads them and as the help says them (`arg`, then `help`; a `\n` goes on below). */
const OPTIONS = {
  sqlite: { type: "string", arg: "FILE", help: "a SqliteSaver database (@langchain/langgraph-checkpoint-sqlite)" },
  postgres: {
    type: "string",
    arg: "URL",
    help: "a PostgresSaver database (@langchain/langgraph-checkpoint-postgres);\nenv:NAME reads the URL from environment variable NAME",
  },
  saver: {
    type: "string",
    arg: "MODULE[:EXPORT]",
    help: "any other saver: a saver, a factory (options) => saver, or a class",
  },
  "saver-options": {
    type: "string",
    arg: "JSON",
    help: 'options for --saver (and for PostgresSaver, e.g. {"schema":"app"})',
  },
  thread: {
    type: "string",
    multiple: true,
    arg: "ID",
    help: "only this thread (repeat, or list ids after the command)",
  },
  provider: {
    type: "string",
    arg: "NAME",
    help: `rules to judge against: ${PROVIDERS.join(", ")} (default: each\nthread's own model, read from its latest AI message; strict when it names none)`,
  },
  "messages-key": { type: "string", arg: "KEY", help: "state key of the messages (default messages)" },
  since: {
    type: "string",
    arg: "WHEN",
    help: "only threads written since an ISO date or a duration (30m, 12h, 7d, 2w)",
  },
  limit: { type: "string", arg: "N", help: "scan: at most N threads; repair: at most N threads repaired" },
  shard: {
    type: "string",
    arg: "I/N",
    help: "only shard I of N (1 <= I <= N): run N processes, one per shard, to read the\nstore together; every thread is in exactly one shard (a hash of its id)",
  },
  concurrency: { type: "string", arg: "N", help: "threads read and repaired at a time (default 4)" },
  json: { type: "boolean", arg: "", help: "one JSON line per thread instead of the summary" },
  apply: { type: "boolean", arg: "", help: "repair: write the fixes (default: dry run)" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
} as const;

const lines = Object.entries(OPTIONS).flatMap(([name, o]) =>
  "help" in o ? [`  ${`--${name} ${o.arg}`.padEnd(31)}${o.help.replace("\n", `\n${" ".repeat(33)}`)}`] : [],
);

export const HELP = `langgraph-tool-repair: find and fix LangGraph threads whose tool calls and results no longer match

Usage:
  langgraph-tool-repair scan   <store> [options]   report broken threads (nothing is written)
  langgraph-tool-repair repair <store> [options]   show the fix of each broken thread (dry run)
  langgraph-tool-repair repair <store> --apply     write each fix as a new checkpoint on top of its thread

Store (exactly one):
${lines.slice(0, 4).join("\n")}

Options:
${lines.slice(4).join("\n")}
  -h, --help, -v, --version

Exit codes: 0 nothing broken, 1 broken threads found (scan, dry run), failed or skipped repairs, or a
repair stopped at --limit (run again), 2 usage or connection error, 130 stopped by Ctrl-C (run again).
`;

/** An ISO date (or date and time), or a duration back from `now`. */
export function parseSince(text: string, now: Date): Date {
  const [, n, unit = ""] = /^(\d+)([smhdw])$/.exec(text.trim()) ?? [];
  const time = unit
    ? now.getTime() - Number(n) * [1e3, 6e4, 36e5, 864e5, 6048e5]["smhdw".indexOf(unit)]
    : /^\d{4}-\d{2}-\d{2}/.test(text)
      ? Date.parse(text)
      : Number.NaN;
  if (Number.isNaN(time))
    throw new UsageError(
      `--since: "${text}" is neither an ISO date (2026-05-01, 2026-05-01T12:00Z) nor a duration (30m, 12h, 7d, 2w)`,
    );
  return new Date(time);
}

/** `text` as one shell word: as it is when it is made of safe characters, else single-quoted. */
const shellWord = (text: string) => (/^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`);

/** A flag and its value as shell words (`shown` instead, if given); a value that starts with "-" as `--flag=value`. */
const flag = (name: string, value: string | undefined, shown = value && shellWord(value)): string[] =>
  value === undefined ? [] : value.startsWith("-") ? [`--${name}=${shown}`] : [`--${name}`, shown!];

function positiveInteger(name: string, text: string | undefined, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (text !== undefined && !(/^\d+$/.test(text) && +text >= 1 && +text <= max))
    throw new UsageError(`--${name}: expected a whole number from 1 to ${max}, got "${text}"`);
  return text === undefined ? undefined : +text;
}

/** `MODULE[:EXPORT]`: the export is the part after the last colon when it is an identifier (not `C:\\`). */
export function parseSaverSpec(spec: string): { module: string; exportName?: string } {
  const at = spec.lastIndexOf(":");
  const exportName = spec.slice(at + 1);
  return at > 1 && /^[A-Za-z_$][\w$]*$/.test(exportName) ? { module: spec.slice(0, at), exportName } : { module: spec };
}

export function parseCliArgs(argv: string[], env: Record<string, string | undefined> = {}, now = new Date()) {
  // biome-ignore lint/suspicious/noImplicitAnyLet: parseArgs infers its result from OPTIONS
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, strict: true, options: OPTIONS });
  } catch (error) {
    // parseArgs names the flag, never a value; an unknown flag is said with the nearest known one.
    const { message, code } = error as Error & { code?: string };
    const unknown = code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && /^Unknown option '(.*)'\. /.exec(message)?.[1];
    const near = unknown && nearestName(unknown.replace(/^-+/, ""), Object.keys(OPTIONS));
    throw new UsageError(unknown ? `unknown option ${unknown}${near ? ` (did you mean --${near}?)` : ""}` : message);
  }
  const {
    values: v,
    positionals: [command, ...rest],
  } = parsed;
  if (v.help) return { help: true } as const;
  if (v.version) return { version: true } as const;
  if (command !== "scan" && command !== "repair")
    throw new UsageError(
      `${command === undefined ? "no command" : `unknown command "${command}"`}: use scan or repair`,
    );
  if (rest.length && !v.thread)
    throw new UsageError("unexpected argument after the command (thread ids go after --thread)");
  if (v.apply && command !== "repair") throw new UsageError("--apply belongs to repair");

  const stores = (["sqlite", "postgres", "saver"] as const).filter((kind) => v[kind] !== undefined);
  if (stores.length !== 1)
    throw new UsageError(
      stores.length
        ? `give one store, not ${stores.map((kind) => `--${kind}`).join(" and ")}`
        : "no store: give --sqlite FILE, --postgres URL or --saver MODULE",
    );
  const [kind] = stores;
  const spec = v[kind]!;
  if (!spec) throw new UsageError(`--${kind} ${OPTIONS[kind].arg}: empty`);
  let store: StoreArgs = kind === "sqlite" ? { kind, file: spec } : { kind: "saver", ...parseSaverSpec(spec) };
  if (kind === "postgres") {
    const url = spec.startsWith("env:") ? env[spec.slice(4)] : spec;
    if (!url) throw new UsageError(`--postgres ${spec}: environment variable ${spec.slice(4)} is not set`);
    if (!/^postgres(ql)?:\/\//.test(url))
      throw new UsageError("--postgres: expected a postgres:// or postgresql:// URL (or env:NAME)");
    store = { kind, url };
  }

  const json = v["saver-options"];
  let saverOptions: Record<string, unknown> | undefined;
  if (json !== undefined) {
    if (kind === "sqlite") throw new UsageError("--saver-options applies to --saver and --postgres");
    try {
      saverOptions = JSON.parse(json);
    } catch {
      throw new UsageError("--saver-options: not valid JSON");
    }
    if (saverOptions?.constructor !== Object) throw new UsageError("--saver-options: expected a JSON object");
  }

  const provider = v.provider as Provider | undefined;
  if (provider !== undefined && !PROVIDERS.includes(provider))
    throw new UsageError(`--provider: "${provider}" is not one of ${PROVIDERS.join(", ")}`);
  const messagesKey = v["messages-key"] ?? "messages";
  if (!messagesKey) throw new UsageError("--messages-key: empty key");
  const threads = v.thread && [...v.thread, ...rest];
  if (threads?.includes("")) throw new UsageError("--thread: empty thread id");
  const [index, count] =
    v.shard === undefined ? [] : (/^(\d+)\/(\d+)$/.exec(v.shard.trim()) ?? []).slice(1).map(Number);
  if (v.shard !== undefined && !(index >= 1 && index <= count && count <= 1e6))
    throw new UsageError(`--shard: expected I/N with 1 <= I <= N (e.g. 1/4), got "${v.shard}"`);
  const shard: Shard | undefined = index ? { index, count } : undefined;

  return {
    command,
    store,
    /**
     * The connection flags as shell words, to print a next command: `--postgres` as `env:NAME` when given so,
     * else `<URL>`, and `--saver-options` as `<JSON>` (neither is ever printed).
     */
    storeFlags: [
      ...flag(kind, spec, kind === "postgres" && !spec.startsWith("env:") ? "<URL>" : undefined),
      ...flag("saver-options", json, "<JSON>"),
    ],
    /** The flags that choose what is read and judged, as shell words: a next command works on the same threads. */
    selectionFlags: [
      ...(threads ?? []).flatMap((thread) => flag("thread", thread)),
      ...flag("provider", provider),
      ...flag("messages-key", v["messages-key"]),
      ...flag("since", v.since),
      ...flag("shard", shard && `${index}/${count}`),
    ],
    saverOptions,
    threads,
    /** Undefined: each thread is judged for its own model's provider (strict when its messages name none). */
    provider,
    messagesKey,
    json: !!v.json,
    apply: !!v.apply,
    since: v.since === undefined ? undefined : parseSince(v.since, now),
    limit: positiveInteger("limit", v.limit),
    shard,
    concurrency: positiveInteger("concurrency", v.concurrency, 64) ?? 4,
  };
}

export type CliArgs = Exclude<ReturnType<typeof parseCliArgs>, { help: true } | { version: true }>;
