/** Runs the command as a child process, the way a user does (`src/cli.ts` under tsx), and collects its output. */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli, type CliIO } from "../../../src/cli/main";

export const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const CLI = "src/cli/index.ts";

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliRunOptions {
  env?: Record<string, string>;
  /** Sends SIGINT once stdout or stderr matches. */
  interruptWhen?: RegExp;
}

export function runCliProcess(args: string[], options: CliRunOptions = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", CLI, ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, NODE_NO_WARNINGS: "1", ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let interrupted = false;
    const check = () => {
      if (!interrupted && options.interruptWhen && options.interruptWhen.test(stdout + stderr)) {
        interrupted = true;
        child.kill("SIGINT");
      }
    };
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
      check();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
      check();
    });
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** The JSON lines of a `--json` run. */
export const jsonLines = (stdout: string): Record<string, unknown>[] =>
  stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** runCli (the bin's body) in this process, its output collected; no environment unless `io.env` gives one. */
export async function runCliHere(
  argv: string[],
  io: Partial<CliIO> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await runCli(argv, {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
    env: {},
    ...io,
  });
  return { code, stdout, stderr };
}

const manifests = { dir: "", count: 0 };
/** A path for a new manifest (in a directory of this test process: never in the repository). */
export const manifestPath = () =>
  join((manifests.dir ||= mkdtempSync(join(tmpdir(), "tool-repair-manifests-"))), `m${++manifests.count}.jsonl`);

/** `--apply` without the question (no terminal in a test), its manifest written to a new temporary file. */
export const applyFlags = () => ["--apply", "--yes", "--manifest", manifestPath()];
