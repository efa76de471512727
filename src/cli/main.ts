/**
 * `langgraph-tool-repair scan|repair|revert`: the command, runnable in-process (tests give it their own streams and
 * signal). Every byte written goes through the redactor (but the progress line: counts only).
 */
import { revertThreads } from "../threads/revert";
import { parseCliArgs, UsageError, type CliArgs } from "./args";
import { openStore, type ModuleImporter, type ThreadStore } from "./connect";
import { confirmWrites, defaultManifestPath, openManifest, readManifest, type ConfirmIO } from "./manifest";
import { num, progressLine, type ProgressStream } from "./progress";
import { optionSecrets, redactor, urlSecrets } from "./redact";
import { renderRevert, renderSummary, renderThread, reportJson, Tally } from "./render";

export interface CliIO extends ConfirmIO {
  stdout: ProgressStream;
  stderr: ProgressStream;
  env?: Record<string, string | undefined>;
  /** Aborted on Ctrl-C: the command stops between threads. */
  signal?: AbortSignal;
  importModule?: ModuleImporter;
}

type Out = { write(text: string): unknown };

/** The exit code (see the help): 0 nothing broken, 1 broken threads or repairs left, 2 usage, 130 interrupted. */
export async function runCli(argv: string[], io: CliIO): Promise<number> {
  // Before the command line is read no secret is known: the generic URL masks still apply.
  let redact = redactor([]);
  const redacted = (stream: ProgressStream) => ({ write: (text: string) => stream.write(redact(text)) });
  const out = redacted(io.stdout);
  const err = redacted(io.stderr);
  const fail = (message: string) => (err.write(`langgraph-tool-repair: ${message}\n`), 2);
  let args: CliArgs;
  try {
    args = parseCliArgs(argv, io.env ?? process.env);
  } catch (error) {
    return fail(`${(error as Error).message}\nRun with --help for usage.`);
  }
  // What must never be printed: the PostgreSQL URL and its parts, secret-looking saver options.
  const { store, saverOptions } = args;
  redact = redactor([
    ...(store.kind === "postgres" ? urlSecrets(store.url) : []),
    ...optionSecrets(saverOptions),
    ...(store.kind === "api" && store.apiKey ? [store.apiKey] : []),
  ]);
  const opened = await openStore(args, io.importModule).catch((error: Error) => error);
  if (opened instanceof Error)
    return fail(opened instanceof UsageError ? opened.message : `could not open the store: ${opened.message}`);
  try {
    return await (args.command === "revert" ? revert : scanOrRepair)(opened, args, io, out);
  } catch (error) {
    return fail((error as Error).message);
  } finally {
    await opened.close();
  }
}

async function scanOrRepair(store: ThreadStore, args: CliArgs, io: CliIO, out: Out) {
  const { label } = store;
  const { command, json, verbose, apply, threads, limit, shard, since, messagesKey } = args;
  const options = {
    ...{ threads, limit, shard, since, messagesKey, provider: args.provider, concurrency: args.concurrency },
    signal: io.signal,
  };
  const repair = command === "repair";
  // A mistyped --thread would otherwise read as a clean store, or be left out of a repair without a word.
  const missing = [];
  for (const thread of threads ?? []) if (!(await store.holds(thread))) missing.push(JSON.stringify(thread));
  if (missing.length) throw new UsageError(`--thread: no checkpoint in ${label} for ${missing.join(", ")}`);
  const progress = progressLine(io.stderr, undefined, args.progress);
  if (io.stderr.isTTY || args.progress) store.count(options).then(progress.total, () => {});
  const manifest = apply ? openManifest(args.manifest ?? defaultManifestPath()) : undefined;
  try {
    if (apply && !(await confirmApply(store, args, io, manifest!.path))) {
      out.write("Nothing written.\n");
      return 1;
    }
    const tally = new Tally();
    for await (const report of repair ? store.repair({ ...options, apply }) : store.scan(options)) {
      tally.add(report);
      const written = report.status === "repaired" && "written" in report && report.written?.configurable;
      if (written)
        manifest!.add({
          thread: report.threadId,
          namespace: report.namespace,
          previousCheckpointId: report.checkpointId!,
          checkpointId: written.checkpoint_id,
        });
      const lines = json ? [reportJson(report)] : renderThread(report, verbose);
      if (lines.length) progress.above(() => out.write(`${lines.join("\n")}\n`));
      progress.tick(`${num(tally.count("broken"))} broken`);
    }
    progress.finish(`${num(tally.count("broken"))} broken`);
    const interrupted = io.signal?.aborted;
    // Every thread read has no list under the key: the key is wrong (a store of many graphs has some that do).
    if (tally.threads > 0 && tally.count("no_messages") === tally.threads)
      throw new UsageError(`--messages-key ${messagesKey}: no thread holds it (${num(tally.threads)} read)`);
    // repair: --limit N is reached once N broken threads were taken on (none is reported after that). Broken
    // threads skipped for their pending work are counted here but not taken on; they make the exit code 1 anyway.
    const limited = limit !== undefined && (repair ? tally.count("broken") : tally.threads) >= limit;
    const next = repair ? !apply && tally.count("would_repair") > 0 : tally.count("broken") > 0;
    if (!json)
      out.write(
        `${renderSummary(tally, {
          label,
          repair,
          verbose,
          stopped: interrupted
            ? "Ctrl-C; run the same command again to go on"
            : limited
              ? `--limit ${limit} reached; run again for the rest`
              : undefined,
          next,
        }).join("\n")}\n`,
      );
    const lines = manifest?.close();
    if (lines)
      (json ? io.stderr : out).write(
        `Manifest: ${manifest!.path} (${num(lines)} thread${lines === 1 ? "" : "s"} changed); undo with: ` +
          `langgraph-tool-repair revert <the same store flags> --manifest ${manifest!.path}\n`,
      );
    if (interrupted) return 130;
    // A repair that stopped at --limit read only part of the store: the rest may still hold broken threads.
    return next || (repair && limited) || tally.count("unreadable") + tally.count("failed") + tally.count("skipped")
      ? 1
      : 0;
  } finally {
    manifest?.close();
  }
}

/** Asks before `repair --apply` writes, with the number of broken threads it would repair (read by a scan first). */
async function confirmApply(store: ThreadStore, args: CliArgs, io: CliIO, path: string) {
  return confirmWrites(
    async () => {
      let broken = 0;
      const { threads, shard, since, messagesKey, provider, concurrency, limit } = args;
      for await (const report of store.scan({ threads, shard, since, messagesKey, provider, concurrency }))
        if (report.status === "broken" && ++broken === limit) break;
      const many = `${num(broken)} broken thread${broken === 1 ? "" : "s"}`;
      return `Repair ${many} in ${store.label} (a new checkpoint on top of each, listed in ${path})?`;
    },
    "repair --apply",
    args.yes,
    io,
  );
}

/** `revert --manifest FILE`: each listed thread's head back to what it held before the repair. */
async function revert({ label, target }: ThreadStore, args: CliArgs, io: CliIO, out: Out) {
  const lines = readManifest(args.manifest!);
  const many = `${num(lines.length)} thread${lines.length === 1 ? "" : "s"}`;
  const question = `Revert ${many} in ${label} to what they held before the repair (a new checkpoint on top of each)?`;
  if (!(await confirmWrites(async () => question, "revert", args.yes, io))) {
    out.write("Nothing written.\n");
    return 1;
  }
  const counts = { reverted: 0, skipped: 0, failed: 0 };
  const progress = progressLine(io.stderr, undefined, args.progress);
  progress.total(lines.length);
  for await (const report of revertThreads(lines, target, io.signal)) {
    counts[report.status]++;
    progress.above(() => out.write(`${args.json ? JSON.stringify(report) : renderRevert(report)}\n`));
    progress.tick("");
  }
  progress.finish("");
  if (!args.json)
    out.write(
      `${label}: ${Object.entries(counts)
        .map(([status, n]) => `${num(n)} ${status}`)
        .join(", ")}\n`,
    );
  return io.signal?.aborted ? 130 : counts.skipped + counts.failed ? 1 : 0;
}
