/**
 * Exit codes and what the command says when it cannot run, how it keeps connection strings out of its output,
 * and how Ctrl-C stops it between threads so that the next run goes on.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { runCli, type CliIO } from "../../src/cli/main";
import { SQLITE_PACKAGE } from "../../src/cli/connect";
import { seedThreads, startSeedModel } from "../threads/support/seed";
import { createFileSaver } from "../threads/support/file-saver";
import { copyThread, openTestStore } from "../threads/support/stores";
import { jsonLines, runCliProcess } from "./support/run-cli";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "tool-repair-cli-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** runCli in this process, its output collected. */
async function runHere(argv: string[], io: Partial<CliIO> = {}) {
  let stdout = "";
  let stderr = "";
  const code = await runCli(argv, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, env: {}, ...io });
  return { code, stdout, stderr };
}

describe("usage and setup errors exit with 2 and say why", () => {
  it("no store, a missing file, a file that is not a database, a database without checkpoints (left as it was)", async () => {
    const dir = tempDir();
    expect(await runCliProcess(["scan"])).toMatchObject({ code: 2, stderr: expect.stringContaining("no store: give --sqlite FILE") });
    expect(await runCliProcess(["scan", "--sqlite", join(dir, "missing.db")])).toMatchObject({ code: 2, stderr: expect.stringContaining("no such file") });
    writeFileSync(join(dir, "text.db"), "not a database at all, just text that is long enough to be a header");
    expect(await runCliProcess(["scan", "--sqlite", join(dir, "text.db")])).toMatchObject({ code: 2, stderr: expect.stringContaining("file is not a database") });
    const empty = join(dir, "empty.db");
    // A connection of the SQLite saver's own driver, without the saver's setup (which would create its tables).
    const raw = () => SqliteSaver.fromConnString(empty).db;
    const writer = raw();
    writer.exec("CREATE TABLE other (x)");
    writer.close();
    expect(await runCliProcess(["repair", "--sqlite", empty, "--apply"])).toMatchObject({ code: 2, stderr: expect.stringContaining("has no checkpoints table") });
    const reader = raw();
    expect(reader.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all()).toEqual([{ name: "other" }]);
    reader.close();
  });

  it("a saver package that is not installed is named with the command that installs it", async () => {
    const missing: CliIO["importModule"] = async (specifier) => {
      throw Object.assign(new Error(`Cannot find package '${specifier}' imported from /app/x.js`), { code: "ERR_MODULE_NOT_FOUND" });
    };
    const dir = tempDir();
    writeFileSync(join(dir, "t.db"), "");
    const run = await runHere(["scan", "--sqlite", join(dir, "t.db")], { importModule: missing });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`--sqlite needs the package ${SQLITE_PACKAGE}, which is not installed. Install it with: npm install ${SQLITE_PACKAGE}`);
    const module = await runCliProcess(["scan", "--saver", "no-such-saver-package"]);
    expect(module).toMatchObject({ code: 2, stderr: expect.stringContaining("npm install no-such-saver-package") });
    expect(await runCliProcess(["scan", "--saver", "./no/such/saver.mjs"])).toMatchObject({ code: 2, stderr: expect.stringContaining("no such module: ./no/such/saver.mjs") });
  });

  it("--saver: an export that is not a saver", async () => {
    const run = await runCliProcess(["scan", "--saver", "./test/threads/support/file-saver.ts:FileSaverOptions"]);
    expect(run).toMatchObject({ code: 2, stderr: expect.stringContaining('no export "FileSaverOptions" (exports: FileSaver, createFileSaver') });
  });
});

describe("connection strings never appear in output", () => {
  it("not in the driver's own errors (a real unreachable PostgreSQL)", async () => {
    const url = "postgresql://postgres:Sup3rS3cret@127.0.0.1:1/test";
    const run = await runCliProcess(["scan", "--postgres", url]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("could not connect to PostgreSQL");
    expect(run.stdout + run.stderr).not.toMatch(/Sup3rS3cret|postgresql:\/\//);
  });

  it("not even when a driver puts the URL and password in its error", async () => {
    const url = "postgresql://app:Sup3r%21S3cret@db.internal:5432/prod";
    const leaky: CliIO["importModule"] = async () => ({
      PostgresSaver: {
        fromConnString: (connString: string) => ({
          options: { schema: "public" },
          pool: { query: async () => Promise.reject(new Error(`connect to ${connString} failed (password "Sup3r!S3cret" rejected)`)) },
          end: async () => {},
        }),
      },
    });
    const run = await runHere(["scan", "--postgres", url], { importModule: leaky });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("could not connect to PostgreSQL: connect to <redacted> failed (password \"<redacted>\" rejected)");
    expect(run.stderr).not.toMatch(/Sup3r|db\.internal/);
  });
});

describe("unreadable threads and Ctrl-C", () => {
  it("an unreadable thread is listed and skipped, and makes the exit code 1", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    const model = await startSeedModel("openai");
    cleanups.push(() => model.stub.close());
    await seedThreads(store.saver, model, { clean: 2 });
    const db = (store.saver as unknown as { db: { prepare(sql: string): { run(...a: unknown[]): unknown } } }).db;
    db.prepare("UPDATE checkpoints SET checkpoint = ? WHERE thread_id = 'clean-2'").run(Buffer.from("{not json"));
    const run = await runCliProcess(["scan", "--sqlite", store.file!]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/1 {2}unreadable \(skipped\)/);
    expect(run.stdout).toMatch(/Unreadable:\n {2}thread clean-2: SyntaxError/);
    expect(run.stdout).toMatch(/1 {2}clean/);
  });

  it("Ctrl-C stops between threads (exit 130); running again repairs the rest", async () => {
    const dir = tempDir();
    const file = join(dir, "threads.json");
    const model = await startSeedModel("openai");
    cleanups.push(() => model.stub.close());
    const saver = createFileSaver({ file });
    const seeded = await seedThreads(saver, model, { brokenSend: 1 });
    for (let i = 0; i < 30; i++) await copyThread(saver, seeded.broken[0], `copy-${String(i).padStart(2, "0")}`);
    // Every read of the command's saver takes 50 ms: the command is still busy when it gets the signal.
    const flags = ["--saver", "./test/threads/support/file-saver.ts:createFileSaver", "--saver-options", JSON.stringify({ file, delayMs: 50 })];
    const first = await runCliProcess(["repair", ...flags, "--apply", "--json", "--concurrency", "1"], { interruptWhen: /"status":"repaired"/ });
    expect(first.code).toBe(130);
    expect(first.stderr).toContain("Stopping after the threads under way");
    const done = jsonLines(first.stdout).filter((l) => l.status === "repaired").length;
    expect(done).toBeGreaterThan(0);
    expect(done).toBeLessThan(31);
    const second = await runCliProcess(["repair", "--saver", flags[1], "--saver-options", JSON.stringify({ file }), "--apply", "--json"]);
    expect(second.code).toBe(0);
    const lines = jsonLines(second.stdout);
    expect(lines.filter((l) => l.status === "repaired")).toHaveLength(31 - done);
    expect(lines.filter((l) => l.status === "unchanged")).toHaveLength(done);
  });
});
