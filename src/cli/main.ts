/**
 * `langgraph-tool-repair scan|repair|revert`: the command, runnable in-process (tests give it their own streams and
 * signal). Every byte written goes through the redactor (but the progress line: counts only).
 */
import { scanThreads } from "../threads/scan";
import { repairThreads } from "../threads/repair";
import { revertThreads } from "../threads/revert";
import { countThreads, threadSourceFor } from "../threads/source";
import { parseCliArgs, UsageError, type CliArgs } from "./args";
import { closeSaver, openStore, type ModuleImporter } from "./connect";
import { confirmWrites, openManifest, readManifest, type ConfirmIO } from "./manifest";
import { num, progressLine, type ProgressStream } from "./progress";
import { optionSecrets, redactor, urlSecrets } from "./redact";
import { many, renderRevert, renderSummary, renderThread, reportJson, Tally } from "./render";

export interface CliIO extends ConfirmIO {
  stdout: ProgressStream;
  stderr: ProgressStream;
  env?: NodeJS.ProcessEnv;
  /** Aborted on Ctrl-C: the command stops between threads. */
  signal?: AbortSignal;
  importModule?: ModuleImporter;
}

/** The exit code (see the help): 0 nothing broken, 1 broken threads or repairs left, 2 usage, 130 interrupted. */
export async function runCli(argv: string[], io: CliIO) {
  // Before the command line is read no secret is known: the generic URL masks still apply.
  let redact = redactor([]);
  const out = (text: string) => io.stdout.write(redact(text));
  const err = (text: string) => io.stderr.write(redact(text));
  const fail = (message: string) => (err(`langgraph-tool-repair: ${message}\n`), 2);
  let args: CliArgs;
  try {
    args = parseCliArgs(argv, io.env ?? process.env);
  } catch (error) {
    return fail(`${(error as Error).message}\nRun with --help for usage.`);
  }
  // What must never be printed: the PostgreSQL URL and its parts, secret-looking saver options.
  const { command, store, saverOptions, json, verbose, apply, yes, manifest: path, progress, ...selection } = args;
  const { threads, limit, messagesKey } = selection;
  redact = redactor([...(store.kind === "postgres" ? urlSecrets(store.url) : []), ...optionSecrets(saverOptions)]);
  const opened = await openStore(args, io.importModule).catch((error: Error) => error);
  if (opened instanceof Error)
    return fail(opened instanceof UsageError ? opened.message : `could not open the store: ${opened.message}`);
  const { saver, label } = opened;
  const meter = progressLine(io.stderr, undefined, progress);
  // Declined, or Ctrl-C at the question.
  const declined = () => (out("Nothing written.\n"), io.signal?.aborted ? 130 : 1);
  let manifest: ReturnType<typeof openManifest> | undefined;
  try {
    if (apply) manifest = openManifest(path);
    if (command === "revert") {
      const lines = readManifest(path!);
      meter.total(lines.length);
      const question = `Revert ${many(lines.length, "thread")} in ${label} to what they held before the repair?`;
      if (!(await confirmWrites(async () => question, "revert", yes, io))) return declined();
      const counts = { reverted: 0, skipped: 0, failed: 0 };
      for await (const report of revertThreads(saver, messagesKey, lines, io.signal)) {
        counts[report.status]++;
        meter.above(() => out(`${json ? JSON.stringify(report) : renderRevert(report)}\n`));
        meter.tick();
      }
      meter.finish();
      const summary = Object.entries(counts).map(([status, n]) => `${num(n)} ${status}`);
      if (!json) out(`${label}: ${summary.join(", ")}\n`);
      return io.signal?.aborted ? 130 : counts.skipped + counts.failed && 1;
    }
    // A mistyped --thread would otherwise read as a clean store, or be left out of a repair without a word.
    const missing = [];
    for (const thread of threads ?? [])
      if ((await threadSourceFor(saver, { threads: [thread] }).next()).done) missing.push(JSON.stringify(thread));
    if (missing.length) throw new UsageError(`--thread: no checkpoint in ${label} for ${missing.join(", ")}`);
    const options = { ...selection, signal: io.signal };
    // Counted beside the scan; the last progress line waits for the total.
    const counted = (io.stderr.isTTY || progress) && countThreads(saver, options).then(meter.total, () => {});
    const broken = async () => {
      let n = 0;
      for await (const report of scanThreads(saver, { ...options, limit: undefined }))
        if (report.status === "broken" && ++n === limit) break;
      // Nothing broken: nothing to ask.
      if (n)
        return `Repair ${many(n, "broken thread")} in ${label} (a new checkpoint on top of each, listed in ${manifest!.path})?`;
    };
    if (apply && !(await confirmWrites(broken, "repair --apply", yes, io))) return declined();
    const repair = command === "repair";
    const tally = new Tally();
    const note = () => `${num(tally.count("broken"))} broken`;
    for await (const report of repair ? repairThreads(saver, { ...options, apply }) : scanThreads(saver, options)) {
      tally.add(report);
      const checkpointId = "written" in report && report.written?.configurable?.checkpoint_id;
      const { threadId: thread, namespace, checkpointId: previousCheckpointId = "" } = report;
      if (checkpointId) manifest!.add({ thread, namespace, previousCheckpointId, checkpointId });
      const lines = json ? [reportJson(report)] : renderThread(report, verbose);
      if (lines.length) meter.above(() => out(`${lines.join("\n")}\n`));
      meter.tick(note());
    }
    await counted;
    meter.finish(note());
    const interrupted = io.signal?.aborted;
    // Every thread read has no list under the key: the key is wrong (a store of many graphs has some that do).
    if (!interrupted && tally.threads && tally.count("no_messages") === tally.threads)
      throw new UsageError(`--messages-key ${messagesKey}: no thread holds it (${num(tally.threads)} read)`);
    // repair: --limit N is reached once N broken threads were taken on (none is reported after that). Broken
    // threads skipped for their pending work are counted here but not taken on; they make the exit code 1 anyway.
    const limited = limit && (repair ? tally.count("broken") : tally.threads) >= limit;
    const next = repair ? !apply && tally.count("would_repair") > 0 : tally.count("broken") > 0;
    const stopped = interrupted
      ? "Ctrl-C; run the same command again to go on"
      : limited
        ? `--limit ${limit} reached; run again for the rest`
        : undefined;
    if (!json) out(`${renderSummary(tally, { label, repair, stopped, next }, verbose).join("\n")}\n`);
    const written = manifest?.close();
    if (written)
      (json ? err : out)(
        `Manifest: ${manifest!.path} (${many(written, "thread")} changed); undo with: ` +
          `langgraph-tool-repair revert <the same store flags> --manifest ${manifest!.path}\n`,
      );
    if (interrupted) return 130;
    // A repair that stopped at --limit read only part of the store: the rest may still hold broken threads.
    return next || (repair && limited) || ["unreadable", "failed", "skipped"].some((name) => tally.count(name)) ? 1 : 0;
  } catch (error) {
    return fail((error as Error).message);
  } finally {
    manifest?.close();
    await closeSaver(saver).catch(() => {});
  }
}
