/**
 * What makes `repair --apply` (and `revert`) safe to run by hand: a question before writing, and a manifest of what
 * was written, which `revert --manifest` undoes. Neither cares where the threads live: any command that writes
 * threads (a saver, an Agent Server's API) asks with `confirmWrites` and records with `openManifest`.
 */
import { appendFileSync, closeSync, openSync, readFileSync, statSync, unlinkSync } from "node:fs";
import { createInterface } from "node:readline";
import type { ManifestLine } from "../threads/revert";
import { UsageError } from "./args";
import type { ProgressStream } from "./progress";

export interface ConfirmIO {
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: ProgressStream;
  signal?: AbortSignal;
}

/**
 * Whether to write: `yes` (`--yes`) goes ahead; a person at a terminal (stdin and stdout both one) is asked the
 * question `ask` makes (it may read the store to say how many threads; none: nothing to ask) and goes ahead on y or yes; without a
 * terminal the command is refused (a UsageError: exit 2) before `ask` runs, as nobody is there to answer. `what`
 * names the write in that refusal (`repair --apply`).
 */
export async function confirmWrites(ask: () => Promise<string | undefined>, what: string, yes: boolean, io: ConfirmIO) {
  const { stdin, stdout, signal } = io;
  if (yes) return true;
  if (!stdin?.isTTY || !stdout.isTTY)
    throw new UsageError(`${what} writes to the store and there is no terminal to confirm on: add --yes to go ahead`);
  const question = await ask();
  if (question === undefined) return true;
  stdout.write(`${question} [y/N] `);
  const lines = createInterface({ input: stdin, terminal: false });
  const answer = await new Promise<string>((resolve) => {
    lines.once("line", resolve).once("close", resolve);
    signal?.addEventListener("abort", () => resolve(""));
    if (signal?.aborted) resolve(""); // Ctrl-C while the question was made (its scan stops early)
  });
  lines.close();
  // No line (stdin closed): undefined, which is no yes either.
  return /^\s*y(es)?\s*$/i.test(answer);
}

const FIELDS = ["thread", "namespace", "previousCheckpointId", "checkpointId"] as const;

/**
 * A manifest, created now (never over an existing file: a UsageError) so that a path that cannot be written stops
 * the command before it writes a thread; each line is on disk before the next thread is written. `close()`
 * (idempotent) says how many lines it holds, and removes the file when none (nothing to undo).
 */
export function openManifest(
  // The default: `tool-repair-manifest-20260507T093000.123Z.jsonl`, in the current directory.
  path = `tool-repair-manifest-${new Date().toISOString().replace(/[-:]/g, "")}.jsonl`,
) {
  let fd: number | undefined;
  let lines = 0;
  try {
    fd = openSync(path, "wx");
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    throw new UsageError(
      `--manifest ${path}: ${code === "EEXIST" ? "already exists (a manifest is never overwritten)" : message}`,
    );
  }
  return {
    path,
    add: (line: ManifestLine) => (appendFileSync(fd!, `${JSON.stringify(line)}\n`), lines++),
    close() {
      if (fd !== undefined && (closeSync(fd), !lines)) unlinkSync(path);
      fd = undefined;
      return lines;
    },
  };
}

/** The lines of a manifest; a missing file, a directory or a line that is not one is a UsageError naming it. */
export function readManifest(path: string) {
  if (!statSync(path, { throwIfNoEntry: false })?.isFile()) throw new UsageError(`--manifest: no such file: ${path}`);
  return readFileSync(path, "utf8")
    .split("\n")
    .flatMap((text, i) => {
      if (!text.trim()) return [];
      let line: ManifestLine | undefined;
      try {
        line = JSON.parse(text);
      } catch {} // refused below
      if (!FIELDS.every((field) => typeof line?.[field] === "string"))
        throw new UsageError(`--manifest ${path}: line ${i + 1} is not a manifest line (${FIELDS.join(", ")})`);
      return [line!];
    });
}
