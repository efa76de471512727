/**
 * Command line of `langgraph-tool-repair` (node:util parseArgs, no dependency). Everything is checked here,
 * so that a mistake is a usage error (exit 2) before anything connects.
 */
import { type ParseArgsConfig, parseArgs } from "node:util";
import { PROVIDERS, type Provider } from "../types";
import { didYouMean } from "../values";

export class UsageError extends Error {
  override name = "UsageError";
}

/**
 * The flags: the name of a flag's value (none: a switch), then what the help says of it (`\n`: on a line below).
 * parseArgs reads this table, and the help lists it in this order, the stores first.
 */
const FLAGS = {
  sqlite: "FILE a SqliteSaver database (@langchain/langgraph-checkpoint-sqlite)",
  postgres:
    "URL a PostgresSaver database (@langchain/langgraph-checkpoint-postgres);\n" +
    "env:NAME reads the URL from environment variable NAME",
  saver: "MODULE[:EXPORT] any other saver: a saver, a factory (options) => saver, or a class",
  "saver-options": 'JSON options for --saver (and for PostgresSaver, e.g. {"schema":"app"})',
  thread: "ID only this thread (repeat for more)",
  provider:
    `NAME rules to judge against: ${PROVIDERS.join(", ")} (default: each\n` +
    "thread's own model, read from its latest AI message; strict when it names none)",
  "messages-key": "KEY state key of the messages (default messages)",
  since: "WHEN only threads written since an ISO date or a duration (30m, 12h, 7d, 2w)",
  limit: "N scan: at most N threads; repair: at most N threads repaired",
  shard:
    "I/N only shard I of N (1 <= I <= N): run N processes, one per shard, to read the\n" +
    "store together; every thread is in exactly one shard (a hash of its id)",
  concurrency: "N threads read and repaired at a time (default 4)",
  json: " one JSON line per thread instead of the summary",
  verbose: " name the rules of threads fine with the middleware",
  progress: " progress on stderr also when it is not a terminal (a pipe, a CI log)",
  apply: " repair: write the fixes (default: dry run)",
  yes: " repair --apply, revert: write without asking (required without a terminal)",
  manifest:
    "FILE repair --apply: where to list what it changed (default: a new\n" +
    "tool-repair-manifest-<UTC time>.jsonl here); revert: the list to undo",
};

/** parseArgs' table, filled in as the help's lines are made; `--help` and `--version` are answered before the command loads (start.ts). */
const OPTIONS: NonNullable<ParseArgsConfig["options"]> = {};
const lines = Object.entries(FLAGS).map(([name, text]) => {
  OPTIONS[name] = { type: text[0] === " " ? "boolean" : "string", multiple: name === "thread" };
  return `--${name} ${text}`
    .replace(/^\S+ \S* /, (flag) => `  ${flag.padEnd(31)}`)
    .replace("\n", `\n${" ".repeat(33)}`);
});

export const HELP = `langgraph-tool-repair: find and fix LangGraph threads whose tool calls and results no longer match

Usage:
  langgraph-tool-repair scan   <store> [options]   report broken threads (nothing is written)
  langgraph-tool-repair repair <store> [options]   show the fix of each broken thread (dry run)
  langgraph-tool-repair repair <store> --apply     write each fix as a new checkpoint on top of its thread
                                                   (asks first; lists them in a manifest)
  langgraph-tool-repair revert <store> --manifest FILE
                                                   undo that: each thread's head holds its old messages again

Store (exactly one):
${lines.slice(0, 4).join("\n")}

Options:
${lines.slice(4).join("\n")}
  -h, --help, --version

Each thread is clean, fine with the middleware (a request to its provider needs the middleware's shaping,
never stored), or broken (repair fixes it).

Exit codes: 0 nothing broken; 1 broken threads found (scan, dry run), failed or skipped repairs or reverts,
a repair stopped at --limit (run again) or a write declined; 2 usage or connection error (also: no command);
130 stopped by Ctrl-C (run again).
`;

/** Throws the usage error `message` unless `ok`. */
function check(ok: unknown, message: string): asserts ok {
  if (!ok) throw new UsageError(message);
}

/** An ISO date (or date and time), or a duration back from `now`. */
export function parseSince(text: string, now: Date) {
  const [, n, unit = ""] = /^(\d+)([smhdw])$/.exec(text.trim()) ?? [];
  const time = unit
    ? +now - Number(n) * [1e3, 6e4, 36e5, 864e5, 6048e5]["smhdw".indexOf(unit)]
    : /^\d{4}-\d{2}-\d{2}/.test(text)
      ? Date.parse(text)
      : Number.NaN;
  check(
    !Number.isNaN(time),
    `--since: "${text}" is neither an ISO date (2026-05-01, 2026-05-01T12:00Z) nor a duration (30m, 12h, 7d, 2w)`,
  );
  return new Date(time);
}

function positiveInteger(name: string, text?: string, max = Number.MAX_SAFE_INTEGER) {
  if (text === undefined) return;
  check(
    /^\d+$/.test(text) && +text >= 1 && +text <= max,
    `--${name}: expected a whole number from 1 to ${max}, got "${text}"`,
  );
  return +text;
}

/** `MODULE[:EXPORT]`: the export is the part after the last colon when it is an identifier (not `C:\\`). */
export function parseSaverSpec(spec: string) {
  const at = spec.lastIndexOf(":");
  const exportName = spec.slice(at + 1);
  return at > 1 && /^[A-Za-z_$][\w$]*$/.test(exportName) ? { module: spec.slice(0, at), exportName } : { module: spec };
}

export function parseCliArgs(argv: string[], env: NodeJS.ProcessEnv = {}, now = new Date()) {
  // biome-ignore lint/suspicious/noImplicitAnyLet: parseArgs infers its result from OPTIONS
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, strict: true, options: OPTIONS });
  } catch (error) {
    // parseArgs names the flag, never a value; an unknown flag is said with the nearest known one.
    const { message } = error as Error;
    const unknown = /^Unknown option '(.*)'\. /.exec(message)?.[1];
    const near = unknown && didYouMean(unknown.replace(/^-+/, ""), Object.keys(FLAGS), "--", "");
    throw new UsageError(unknown ? `unknown option ${unknown}${near}` : message);
  }
  const [command, ...rest] = parsed.positionals;
  const v = parsed.values as Record<string, string | undefined>;
  const commands = ["scan", "repair", "revert"];
  check(
    commands.includes(command),
    `${command === undefined ? "no command" : `unknown command "${command}"${didYouMean(command, commands)}`}: use scan, repair or revert`,
  );
  check(!rest.length, "unexpected argument after the command");
  // What writes: --apply (repair), then --yes and --manifest (repair --apply, revert).
  const writes = command === "revert" || v.apply;
  const stray = v.apply && command !== "repair" ? "apply" : !writes && (v.yes ? "yes" : v.manifest && "manifest");
  check(!stray, `--${stray} goes with repair --apply${stray === "apply" ? "" : " or revert"}`);
  check(command !== "revert" || v.manifest, "revert needs --manifest FILE (the one repair --apply wrote)");

  const [kind, other] = (["sqlite", "postgres", "saver"] as const).filter((kind) => v[kind] !== undefined);
  check(kind && !other, "give one store: --sqlite FILE, --postgres URL or --saver MODULE");
  const spec = v[kind]!;
  check(spec, `--${kind} ${FLAGS[kind].split(" ")[0]}: empty`);
  const url = kind === "postgres" && spec.startsWith("env:") ? env[spec.slice(4)] : spec;
  check(url, `--postgres ${spec}: environment variable ${spec.slice(4)} is not set`);
  check(
    kind !== "postgres" || /^postgres(ql)?:\/\//.test(url),
    "--postgres: expected a postgres:// or postgresql:// URL (or env:NAME)",
  );
  const store =
    kind === "sqlite" ? { kind, file: spec } : kind === "postgres" ? { kind, url } : { kind, ...parseSaverSpec(spec) };

  let saverOptions: Record<string, unknown> | undefined;
  if (v["saver-options"] !== undefined) {
    check(kind !== "sqlite", "--saver-options applies to --saver and --postgres");
    try {
      saverOptions = JSON.parse(v["saver-options"]);
    } catch {} // not JSON: refused below as not an object
    check(saverOptions?.constructor === Object, "--saver-options: expected a JSON object");
  }

  const provider = v.provider as Provider | undefined;
  check(
    provider === undefined || PROVIDERS.includes(provider),
    `--provider: "${provider}" is not one of ${PROVIDERS.join(", ")}${didYouMean(provider, PROVIDERS)}`,
  );
  const messagesKey = v["messages-key"] ?? "messages";
  check(messagesKey, "--messages-key: empty key");
  const threads = parsed.values.thread as string[] | undefined;
  check(!threads?.includes(""), "--thread: empty thread id");
  const [, index, count] = (v.shard && /^(\d+)\/(\d+)$/.exec(v.shard.trim())?.map(Number)) || [];
  check(
    v.shard === undefined || (index >= 1 && index <= count && count <= 1e6),
    `--shard: expected I/N with 1 <= I <= N (e.g. 1/4), got "${v.shard}"`,
  );

  return {
    command,
    store,
    saverOptions,
    threads,
    /** Undefined: each thread is judged for its own model's provider (strict when its messages name none). */
    provider,
    messagesKey,
    json: !!v.json,
    verbose: !!v.verbose,
    progress: !!v.progress,
    apply: !!v.apply,
    yes: !!v.yes,
    manifest: v.manifest,
    since: v.since === undefined ? undefined : parseSince(v.since, now),
    limit: positiveInteger("limit", v.limit),
    shard: index ? { index, count } : undefined,
    concurrency: positiveInteger("concurrency", v.concurrency, 64) ?? 4,
  };
}

export type CliArgs = ReturnType<typeof parseCliArgs>;
