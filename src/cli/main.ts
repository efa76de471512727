/**
 * `langgraph-tool-repair scan|repair`: the command, runnable in-process (tests give it their own streams and
 * signal). Every byte written goes through the redactor.
 */
import { countThreads, scanThreads, type ThreadReport } from "../threads/scan";
import { repairThreads } from "../threads/repair";
import { TOOL_VERSION } from "../threads/write";
import { HELP, parseCliArgs, UsageError, type CliArgs } from "./args";
import { importModule, openStore, secretsOf, SetupError, type ModuleImporter, type OpenedStore } from "./connect";
import { Progress, type ProgressStream } from "./progress";
import { redactor, type Redact } from "./redact";
import { renderRepair, renderSummary, repairJson, scanJson, Tally } from "./render";

export interface CliIO {
  stdout: ProgressStream;
  stderr: ProgressStream;
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Aborted on Ctrl-C: the command stops between threads. */
  signal?: AbortSignal;
  importModule?: ModuleImporter;
  /** Between plain progress lines when stderr is not a terminal. */
  progressEveryMs?: number;
}

export const EXIT = { ok: 0, found: 1, usage: 2, interrupted: 130 } as const;

/** A stream whose every write is redacted. */
function redacted(stream: ProgressStream, redact: Redact): ProgressStream {
  return { write: (text: string) => stream.write(redact(text)), isTTY: stream.isTTY, columns: stream.columns };
}

const printLines = (stream: ProgressStream, lines: string[]) => {
  if (lines.length > 0) stream.write(`${lines.join("\n")}\n`);
};

export async function runCli(argv: string[], io: CliIO): Promise<number> {
  const env = io.env ?? process.env;
  let redact: Redact = redactor([]);
  const stderr = () => redacted(io.stderr, redact);
  let args: CliArgs;
  try {
    const parsed = parseCliArgs(argv, env);
    if ("help" in parsed) {
      io.stdout.write(HELP);
      return EXIT.ok;
    }
    if ("version" in parsed) {
      io.stdout.write(`${TOOL_VERSION}\n`);
      return EXIT.ok;
    }
    args = parsed;
  } catch (error) {
    // No secret is known yet: the generic URL masks still apply.
    stderr().write(`langgraph-tool-repair: ${(error as Error).message}\nRun with --help for usage.\n`);
    return EXIT.usage;
  }
  redact = redactor(secretsOf(args));
  const out = redacted(io.stdout, redact);
  const err = stderr();

  let store: OpenedStore;
  try {
    store = await openStore(args, io.cwd ?? process.cwd(), io.importModule ?? importModule);
  } catch (error) {
    const usage = error instanceof UsageError || error instanceof SetupError;
    err.write(
      `langgraph-tool-repair: ${usage ? (error as Error).message : `could not open the store: ${(error as Error).message}`}\n`,
    );
    return EXIT.usage;
  }
  try {
    return await run(args, store, out, err, io);
  } catch (error) {
    err.write(`langgraph-tool-repair: ${(error as Error).message}\n`);
    return EXIT.usage;
  } finally {
    await store.close().catch(() => {});
  }
}

async function run(
  args: CliArgs,
  store: OpenedStore,
  out: ProgressStream,
  err: ProgressStream,
  io: CliIO,
): Promise<number> {
  const started = performance.now();
  const { threads, provider, messagesKey, since, limit, shard, concurrency, apply, json } = args;
  const options = { threads, provider, messagesKey, since, limit, shard, concurrency, signal: io.signal };
  const total = await countThreads(store.saver, options).catch(() => undefined);
  const repair = args.command === "repair";
  const progress = new Progress(err, {
    total: repair || limit === undefined ? total : Math.min(total ?? Infinity, limit),
    verb: repair ? "checked" : "scanned",
    lineEveryMs: io.progressEveryMs,
  });
  const tally = new Tally();
  const reports = repair ? repairThreads(store.saver, { ...options, apply }) : scanThreads(store.saver, options);
  for await (const report of reports) {
    tally.add(report);
    const repaired = "found" in report ? report : undefined;
    if (json)
      progress.above(() => out.write(`${repaired ? repairJson(repaired) : scanJson(report as ThreadReport)}\n`));
    else if (repaired) {
      const lines = renderRepair(repaired);
      if (lines.length > 0) progress.above(() => printLines(out, lines));
    }
    const broken = `${tally.count("broken")} broken`;
    progress.tick(
      repair
        ? `${broken}, ${tally.outcome(apply ? "repaired" : "would_repair")} ${apply ? "repaired" : "to repair"}`
        : broken,
    );
  }
  progress.finish();

  const interrupted = io.signal?.aborted === true;
  // repair: --limit N is reached once N broken threads were taken on (none is reported after that). Broken
  // threads skipped for their pending work are counted here but not taken on; they make the exit code 1 anyway.
  const limited = limit !== undefined && (repair ? tally.count("broken") : tally.threads) >= limit;
  if (!json) {
    const stopped = interrupted
      ? "Ctrl-C; run the same command again to go on"
      : limited
        ? `--limit ${limit} reached; run again for the rest`
        : undefined;
    const elapsedMs = performance.now() - started;
    const next = nextCommand(args, tally, limited, io.env ?? process.env);
    printLines(out, renderSummary(tally, { label: store.label, elapsedMs, stopped, repair, nextCommand: next }));
  } else if (interrupted) {
    err.write(`langgraph-tool-repair: stopped by Ctrl-C after ${tally.threads} threads; run again to go on\n`);
  }
  if (interrupted) return EXIT.interrupted;
  const trouble = tally.count("unreadable") + tally.outcome("failed") + tally.outcome("skipped");
  // A repair that stopped at --limit read only part of the store: the rest may still hold broken threads.
  const found = repair ? limited || (!apply && tally.outcome("would_repair") > 0) : tally.count("broken") > 0;
  return trouble > 0 || found ? EXIT.found : EXIT.ok;
}

/**
 * The command to run next, with the store and the selection given (never a connection string: `--postgres`
 * is `env:NAME` or `<URL>`, `--saver-options` is `<JSON>`). `--limit` goes on only from repair to repair:
 * for scan it counts threads read, for repair threads repaired.
 */
function nextCommand(
  args: CliArgs,
  tally: Tally,
  limited: boolean,
  env: Record<string, string | undefined>,
): string | undefined {
  const command = (...extra: string[]) =>
    [`${invokedAs(env)} repair`, ...args.storeFlags, ...args.selectionFlags, ...extra].join(" ");
  const limit = args.limit !== undefined ? ["--limit", String(args.limit)] : [];
  if (args.command === "scan")
    return tally.count("broken") > 0
      ? `${command()}   (a dry run: shows each fix; add --apply to write it)`
      : undefined;
  if (!args.apply) return tally.outcome("would_repair") > 0 ? command(...limit, "--apply") : undefined;
  return limited ? `${command(...limit, "--apply")}   (goes on with the next ${args.limit} broken threads)` : undefined;
}

/**
 * How to run this command again: `npm run cli --` when it was started so in this package's own checkout (where
 * `npx langgraph-tool-repair` finds no installed bin), otherwise npx, as an installed package runs it.
 */
function invokedAs(env: Record<string, string | undefined>): string {
  return env.npm_lifecycle_event === "cli" && env.npm_package_name === "langgraph-tool-repair"
    ? "npm run cli --"
    : "npx langgraph-tool-repair";
}
