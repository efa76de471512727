/**
 * Exit codes and what the command says when it cannot run, how it keeps connection strings out of its output,
 * and how Ctrl-C stops it between threads so that the next run goes on.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterEach, describe, expect, it } from "vitest";
import type { CliIO } from "../../src/cli/main";
import { seedThreads, startSeedModel } from "../threads/support/seed";
import { createFileSaver } from "../threads/support/file-saver";
import { copyThread, openTestStore } from "../threads/support/stores";
import { applyFlags, jsonLines, runCliProcess, runCliHere } from "./support/run-cli";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "tool-repair-cli-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The better-sqlite3 connection of a SqliteSaver, for tests that reach into its tables. */
const sqliteDb = (saver: BaseCheckpointSaver) =>
  (saver as unknown as { db: { prepare(sql: string): { run(...a: unknown[]): unknown } } }).db;

/** `copies` copies of a thread (every checkpoint and write) as copy-0001..., made in SQL: many threads at once. */
function copySqliteThread(saver: BaseCheckpointSaver, from: string, copies: number): void {
  const n = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${copies})`;
  const db = sqliteDb(saver);
  db.prepare(
    `${n} INSERT INTO checkpoints SELECT printf('copy-%04d', i), checkpoint_ns, checkpoint_id, ` +
      "parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints, n WHERE thread_id = ?",
  ).run(from);
  db.prepare(
    `${n} INSERT INTO writes SELECT printf('copy-%04d', i), checkpoint_ns, checkpoint_id, task_id, ` +
      "idx, channel, type, value FROM writes, n WHERE thread_id = ?",
  ).run(from);
}

describe("usage and setup errors exit with 2 and say why", () => {
  it("no store, a missing file, a file that is not a database, a database without checkpoints (left as it was)", async () => {
    const dir = tempDir();
    expect(await runCliProcess(["scan"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("give one store: --sqlite FILE"),
    });
    expect(await runCliProcess(["scan", "--sqlite", join(dir, "missing.db")])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("no such file"),
    });
    writeFileSync(join(dir, "text.db"), "not a database at all, just text that is long enough to be a header");
    expect(await runCliProcess(["scan", "--sqlite", join(dir, "text.db")])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("file is not a database"),
    });
    const empty = join(dir, "empty.db");
    // A connection of the SQLite saver's own driver, without the saver's setup (which would create its tables).
    const raw = () => SqliteSaver.fromConnString(empty).db;
    const writer = raw();
    writer.exec("CREATE TABLE other (x)");
    writer.close();
    expect(await runCliProcess(["repair", "--sqlite", empty, "--apply", "--yes"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("has no checkpoints table"),
    });
    const reader = raw();
    expect(reader.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all()).toEqual([{ name: "other" }]);
    reader.close();
  });

  it("a directory given to --sqlite, and a --messages-key no thread has, are usage errors (one line, exit 2)", async (context) => {
    const dir = tempDir();
    expect(await runCliHere(["scan", "--sqlite", dir])).toEqual({
      code: 2,
      stdout: "",
      stderr: `langgraph-tool-repair: --sqlite: a directory, not a SQLite file: ${dir}\n`,
    });
    const store = await openTestStore("SqliteSaver", context);
    const model = await startSeedModel("openai");
    cleanups.push(() => model.stub.close());
    await seedThreads(store.saver, model, { brokenSend: 1, clean: 2 });
    for (const command of ["scan", "repair"])
      expect(await runCliHere([command, "--sqlite", store.file!, "--messages-key", "msgs"])).toEqual({
        code: 2,
        stdout: "",
        stderr: "langgraph-tool-repair: --messages-key msgs: no thread holds it (3 read)\n",
      });
    // The right key: the broken thread is found.
    expect((await runCliHere(["scan", "--sqlite", store.file!, "--messages-key", "messages"])).code).toBe(1);
  });

  it("a saver package that is not installed is named with the command that installs it", async () => {
    const missing: CliIO["importModule"] = async (specifier) => {
      throw Object.assign(new Error(`Cannot find package '${specifier}' imported from /app/x.js`), {
        code: "ERR_MODULE_NOT_FOUND",
      });
    };
    const dir = tempDir();
    writeFileSync(join(dir, "t.db"), "");
    const run = await runCliHere(["scan", "--sqlite", join(dir, "t.db")], { importModule: missing });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      "--sqlite needs the package @langchain/langgraph-checkpoint-sqlite, which is not installed. " +
        "Install it with: npm install @langchain/langgraph-checkpoint-sqlite",
    );
    const module = await runCliProcess(["scan", "--saver", "no-such-saver-package"]);
    expect(module).toMatchObject({ code: 2, stderr: expect.stringContaining("npm install no-such-saver-package") });
    expect(await runCliProcess(["scan", "--saver", "./no/such/saver.mjs"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--saver: could not load ./no/such/saver.mjs: "),
    });
  });

  it("--saver: an export that is not a saver", async () => {
    const run = await runCliProcess(["scan", "--saver", "./test/threads/support/file-saver.ts:FileSaverOptions"]);
    expect(run).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('export "FileSaverOptions" is not a checkpoint saver'),
    });
  });
});

describe("connection strings never appear in output", () => {
  it("a bad --postgres value is a usage error whose fixed text reads right, the value itself never shown", async () => {
    const expected = "langgraph-tool-repair: --postgres: expected a postgres:// or postgresql:// URL (or env:NAME)\n";
    for (const [argv, env] of [
      [["scan", "--postgres", "mysql://app:Sup3rS3cret@db.internal/app"], {}],
      [["scan", "--postgres", "env:DB_URL"], { DB_URL: "mysql://app:Sup3rS3cret@db.internal/app" }],
    ] as const) {
      const run = await runCliHere([...argv], { env });
      expect(run.code).toBe(2);
      expect(run.stderr.startsWith(expected)).toBe(true);
      expect(run.stdout + run.stderr).not.toMatch(/Sup3rS3cret|db\.internal|<postgres URL>/);
    }
  });

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
          pool: {
            query: async () =>
              Promise.reject(new Error(`connect to ${connString} failed (password "Sup3r!S3cret" rejected)`)),
          },
          end: async () => {},
        }),
      },
    });
    const run = await runCliHere(["scan", "--postgres", url], { importModule: leaky });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      'could not connect to PostgreSQL: connect to <redacted> failed (password "<redacted>" rejected)',
    );
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
    expect(run.stdout).toMatch(/^thread clean-2: unreadable, skipped: SyntaxError/m);
    expect(run.stdout).toMatch(/1 {2}clean/);
  });

  it("an unreadable thread's reason is printed as one short printable line, not the blob's raw bytes", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    const model = await startSeedModel("openai");
    cleanups.push(() => model.stub.close());
    await seedThreads(store.saver, model, { clean: 1 });
    await copyThread(store.saver, "clean-1", "corrupt", "", true);
    sqliteDb(store.saver)
      .prepare("UPDATE checkpoints SET checkpoint = ? WHERE thread_id = 'corrupt'")
      .run(Buffer.from([0x00, 0xff, 0x13, 0x1b, 0x5b, 0x32, 0x4a, 0x0d]));
    const unprintable = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\ufffd]/;
    const text = await runCliProcess(["repair", "--sqlite", store.file!]);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(
      /thread corrupt: unreadable, skipped: SyntaxError: Unexpected token '\\x00', "\\x00\\u\{fffd\}\\x13\\x1b\[2J\\r" is not valid JSON/,
    );
    expect(text.stdout).not.toMatch(unprintable);
    const json = jsonLines((await runCliProcess(["scan", "--sqlite", store.file!, "--json"])).stdout).find(
      (l) => l.thread === "corrupt",
    )!;
    expect(json.error).toMatch(/^SyntaxError: .*\\x00/);
    expect(json.error).not.toMatch(unprintable);
  });

  it("a thread the engine cannot judge is reported FAILED; the others are repaired and the exit code is 1", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    const model = await startSeedModel("openai");
    cleanups.push(() => model.stub.close());
    const seeded = await seedThreads(store.saver, model, { brokenSend: 3 });
    const bad = seeded.broken[1];
    // The real SqliteSaver on the file, whose read of `bad` holds a message that throws when read.
    const faulty = (saver: BaseCheckpointSaver): BaseCheckpointSaver =>
      new Proxy(saver, {
        get(target, property) {
          if (property === "getTuple")
            return async (config: RunnableConfig) => {
              const tuple = await target.getTuple(config);
              if (config.configurable?.thread_id === bad && !config.configurable?.checkpoint_id && tuple) {
                const ai = (tuple.checkpoint.channel_values.messages as BaseMessage[]).find(
                  (m) => m.getType() === "ai",
                )!;
                Object.defineProperty(ai, "tool_calls", {
                  get: () => {
                    throw new Error("tool_calls cannot be read");
                  },
                });
              }
              return tuple;
            };
          const value = Reflect.get(target, property, target);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
    const importModule: CliIO["importModule"] = async () => ({
      SqliteSaver: { fromConnString: (path: string) => faulty(SqliteSaver.fromConnString(path)) },
    });
    const run = await runCliHere(["repair", "--sqlite", store.file!, ...applyFlags(), "--concurrency", "1"], {
      importModule,
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`thread ${bad}: FAILED: ToolCallRepairInputError: `);
    expect(run.stdout).toMatch(/2 {2}repaired \(new checkpoint on top\)\n {2}1 {2}failed/);
    for (const thread of seeded.broken.filter((t) => t !== bad))
      expect(run.stdout).toContain(`thread ${thread}: repaired`);
  });

  it("Ctrl-C stops a SQLite repair between threads, although better-sqlite3 never makes it wait (exit 130)", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    const model = await startSeedModel("openai");
    cleanups.push(() => model.stub.close());
    const seeded = await seedThreads(store.saver, model, { brokenSend: 1 });
    const total = 201;
    copySqliteThread(store.saver, seeded.broken[0], total - 1);
    const argv = () => ["repair", "--sqlite", store.file!, ...applyFlags(), "--json", "--concurrency", "1"];
    const first = await runCliProcess(argv(), { interruptWhen: /"status":"repaired"/ });
    expect(first.code).toBe(130);
    expect(first.stderr).toContain("Stopping after the threads under way");
    const done = jsonLines(first.stdout).filter((l) => l.status === "repaired").length;
    expect(done).toBeGreaterThan(0);
    expect(done).toBeLessThan(total);
    const second = await runCliProcess(argv());
    expect(second.code).toBe(0);
    const lines = jsonLines(second.stdout);
    expect(lines.filter((l) => l.status === "repaired")).toHaveLength(total - done);
    expect(lines.filter((l) => l.status === "unchanged")).toHaveLength(done);
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
    const flags = [
      "--saver",
      "./test/threads/support/file-saver.ts:createFileSaver",
      "--saver-options",
      JSON.stringify({ file, delayMs: 50 }),
    ];
    const first = await runCliProcess(["repair", ...flags, ...applyFlags(), "--json", "--concurrency", "1"], {
      interruptWhen: /"status":"repaired"/,
    });
    expect(first.code).toBe(130);
    expect(first.stderr).toContain("Stopping after the threads under way");
    const done = jsonLines(first.stdout).filter((l) => l.status === "repaired").length;
    expect(done).toBeGreaterThan(0);
    expect(done).toBeLessThan(31);
    const second = await runCliProcess([
      "repair",
      "--saver",
      flags[1],
      "--saver-options",
      JSON.stringify({ file }),
      ...applyFlags(),
      "--json",
    ]);
    expect(second.code).toBe(0);
    const lines = jsonLines(second.stdout);
    expect(lines.filter((l) => l.status === "repaired")).toHaveLength(31 - done);
    expect(lines.filter((l) => l.status === "unchanged")).toHaveLength(done);
  });
});
