/**
 * scanThreads over real stores: every thread once, in every namespace, page after page; the selection options;
 * unreadable threads reported and skipped; option checks.
 */
import { afterEach, describe, expect, it } from "vitest";
import { MemorySaver, uuid6 } from "@langchain/langgraph-checkpoint";
import pg from "pg";
import {
  printableText,
  REASON_MAX,
  scanThreads,
  type ThreadReport,
  type ThreadScanOptions,
} from "../../src/threads/scan";
import { PAGE_SIZE, checkpointIdAt, shardOf } from "../../src/threads/source";
import { POSTGRES_URL } from "../support/services";
import { seedThreads, startSeedModel, type SeedModel } from "./support/seed";
import { copyThread, openTestStore, STORE_NAMES, type TestStore } from "./support/stores";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function model(): Promise<SeedModel> {
  const started = await startSeedModel("openai");
  cleanups.push(() => started.stub.close());
  return started;
}

async function collect(store: TestStore, options: ThreadScanOptions = {}): Promise<ThreadReport[]> {
  const reports: ThreadReport[] = [];
  for await (const report of scanThreads(store.saver, options)) reports.push(report);
  return reports;
}

const keyOf = (r: ThreadReport) => `${r.threadId}|${r.namespace}`;

describe.each(STORE_NAMES)("scanThreads on %s", (name) => {
  it("reads every thread once, in every namespace, past the first page of keys, and judges each", async (context) => {
    const store = await openTestStore(name, context);
    const seeded = await seedThreads(store.saver, await model(), { brokenSend: 1, clean: 1 });
    // The file saver rewrites its whole file per write and has no pages: a few copies are enough there.
    const copies = name === "FileSaver" ? 50 : PAGE_SIZE + 20;
    for (let i = 0; i < copies; i += 10)
      await Promise.all(
        Array.from({ length: Math.min(10, copies - i) }, (_, k) =>
          copyThread(store.saver, seeded.broken[0], `copy-${String(i + k).padStart(4, "0")}`, "", true),
        ),
      );
    await copyThread(store.saver, seeded.clean[0], "copy-0007", "tools:child-1"); // a subgraph namespace of a copied thread

    const reports = await collect(store);
    expect(reports).toHaveLength(copies + 3);
    expect(new Set(reports.map(keyOf)).size).toBe(reports.length);
    expect(reports.filter((r) => r.status === "broken")).toHaveLength(copies + 1);
    expect(reports.find((r) => r.threadId === "copy-0007" && r.namespace === "tools:child-1")?.status).toBe("clean");
    expect(reports.find((r) => r.threadId === seeded.clean[0])).toMatchObject({
      status: "clean",
      problems: [],
      structural: 0,
    });
    const broken = reports.find((r) => r.threadId === "copy-0042")!;
    expect(broken.problems.map((p) => p.kind)).toEqual(["orphan_call", "orphan_call"]);
    expect(broken.structural).toBe(2);
  });

  it("threads: only the named threads, each in every namespace", async (context) => {
    const store = await openTestStore(name, context);
    const seeded = await seedThreads(store.saver, await model(), { brokenSend: 1, clean: 1 });
    await copyThread(store.saver, seeded.clean[0], seeded.broken[0], "tools:child-1");
    const reports = await collect(store, { threads: [seeded.broken[0], "no-such-thread"] });
    expect(reports.map(keyOf).sort()).toEqual([`${seeded.broken[0]}|`, `${seeded.broken[0]}|tools:child-1`]);
  });

  it("since: only threads written at or after the time; limit: at most that many", async (context) => {
    const store = await openTestStore(name, context);
    const early = await seedThreads(store.saver, await model(), { clean: 2, prefix: "early-" });
    await new Promise((resolve) => setTimeout(resolve, 5)); // two distinct milliseconds in the checkpoint ids
    const since = new Date();
    const late = await seedThreads(store.saver, await model(), { brokenSend: 1, clean: 1, prefix: "late-" });
    expect(early.clean).toHaveLength(2);
    expect((await collect(store, { since })).map((r) => r.threadId).sort()).toEqual(
      [...late.broken, ...late.clean].sort(),
    );
    expect(await collect(store, { limit: 3 })).toHaveLength(3);
  });

  it("shard i/n: every thread in exactly one shard, each shard read alone", async (context) => {
    const store = await openTestStore(name, context);
    const seeded = await seedThreads(store.saver, await model(), { brokenSend: 1, clean: 1 });
    const copies = name === "FileSaver" ? 12 : 40;
    for (let i = 0; i < copies; i++)
      await copyThread(
        store.saver,
        i % 2 ? seeded.clean[0] : seeded.broken[0],
        `copy-${i}`,
        i % 3 ? "" : "sub:1",
        true,
      );
    const all = (await collect(store)).map(keyOf).sort();
    const count = 3;
    const shards = await Promise.all(
      Array.from({ length: count }, (_, i) => collect(store, { shard: { index: i + 1, count } })),
    );
    expect(shards.flat().map(keyOf).sort()).toEqual(all);
    for (const [i, reports] of shards.entries()) {
      expect(reports.length).toBeGreaterThan(0); // 42 threads in 3 shards: none is empty but by a 1-in-10^7 chance
      for (const report of reports) expect(shardOf(report.threadId, count)).toBe(i + 1);
    }
    // A selection of ids keeps to the shard as well.
    const ids = ["copy-1", "copy-2", "copy-3", "copy-4"];
    const picked = (await collect(store, { threads: ids, shard: { index: 1, count } })).map((r) => r.threadId);
    expect([...new Set(picked)].sort()).toEqual(ids.filter((id) => shardOf(id, count) === 1).sort());
  });

  it("stops between threads when the signal aborts", async (context) => {
    const store = await openTestStore(name, context);
    await seedThreads(store.saver, await model(), { clean: 1 });
    for (let i = 0; i < 30; i++) await copyThread(store.saver, "clean-1", `copy-${i}`, "", true);
    const controller = new AbortController();
    const reports: ThreadReport[] = [];
    for await (const report of scanThreads(store.saver, { signal: controller.signal, concurrency: 2 })) {
      reports.push(report);
      controller.abort();
    }
    expect(reports.length).toBeLessThanOrEqual(3); // the one taken, and at most the two under way
  });
});

describe("scanThreads on SqliteSaver: a stop asked from outside the loop", () => {
  it("is seen between threads, although every read of better-sqlite3 settles at once", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    await seedThreads(store.saver, await model(), { clean: 1 });
    const total = 300;
    for (let i = 1; i < total; i++)
      await copyThread(store.saver, "clean-1", `copy-${String(i).padStart(3, "0")}`, "", true);
    // Aborted by a task, as a SIGINT handler is: it runs only when the scan lets the event loop turn.
    const controller = new AbortController();
    setImmediate(() => controller.abort());
    const reports: ThreadReport[] = [];
    for await (const report of scanThreads(store.saver, { signal: controller.signal, concurrency: 2 }))
      reports.push(report);
    expect(controller.signal.aborted).toBe(true);
    expect(reports.length).toBeLessThan(total);
  });
});

describe("scanThreads: unreadable threads", () => {
  it("SQLite: a thread whose checkpoint cannot be decoded is reported and skipped", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    const seeded = await seedThreads(store.saver, await model(), { brokenSend: 1, clean: 1 });
    await copyThread(store.saver, seeded.broken[0], "corrupt");
    const db = (store.saver as unknown as { db: { prepare(sql: string): { run(...a: unknown[]): unknown } } }).db;
    db.prepare("UPDATE checkpoints SET checkpoint = ? WHERE thread_id = 'corrupt'").run(
      Buffer.from([0x00, 0xff, 0x13]),
    );
    const reports = await collect(store);
    expect(reports.find((r) => r.threadId === "corrupt")).toMatchObject({
      status: "unreadable",
      error: expect.stringMatching(/JSON|Unexpected/),
    });
    expect(
      reports
        .filter((r) => r.status !== "unreadable")
        .map((r) => r.status)
        .sort(),
    ).toEqual(["broken", "clean"]);
  });

  it("the reason is one short printable line: the corrupt blob's bytes are escaped, not printed", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    const seeded = await seedThreads(store.saver, await model(), { clean: 1 });
    await copyThread(store.saver, seeded.clean[0], "corrupt", "", true);
    const db = (store.saver as unknown as { db: { prepare(sql: string): { run(...a: unknown[]): unknown } } }).db;
    db.prepare("UPDATE checkpoints SET checkpoint = ? WHERE thread_id = 'corrupt'").run(
      Buffer.from([0x00, 0xff, 0x13, 0x0a, 0x1b, 0x5b, 0x32, 0x4a]),
    );
    const error = (await collect(store)).find((r) => r.threadId === "corrupt")?.error ?? "";
    expect(error).toMatch(/^SyntaxError: /);
    expect(error).toContain("\\x00");
    expect(error).not.toMatch(/[\u0000-\u001f\u007f-\u009f\ufffd]/);
    expect(error.length).toBeLessThanOrEqual(REASON_MAX);
  });

  it("printableText: controls, bidi overrides, zero-width and replacement characters escaped; one line, capped", () => {
    expect(printableText("a\u0000b\u202ec\u200bd\ufffde\tf\rg\nsecond line")).toBe(
      "a\\x00b\\u{202e}c\\u{200b}d\\u{fffd}e\\tf\\rg",
    );
    expect(printableText("é 日本 😀")).toBe("é 日本 😀");
    const long = printableText(`${"x".repeat(REASON_MAX - 2)}😀😀`);
    expect(long.length).toBeLessThanOrEqual(REASON_MAX);
    expect(long.endsWith("…")).toBe(true);
    expect(long).not.toMatch(/[\ud800-\udfff]…$/);
  });

  it("PostgreSQL: a thread whose messages blob cannot be decoded is reported and skipped", async (context) => {
    const store = await openTestStore("PostgresSaver", context);
    const seeded = await seedThreads(store.saver, await model(), { brokenSend: 1, clean: 1 });
    await copyThread(store.saver, seeded.broken[0], "corrupt");
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    await client.query(
      `UPDATE "${store.schema}".checkpoint_blobs SET blob = '\\x00ff13'::bytea WHERE thread_id = 'corrupt' AND channel = 'messages'`,
    );
    await client.end();
    const reports = await collect(store);
    expect(reports.find((r) => r.threadId === "corrupt")?.status).toBe("unreadable");
    expect(
      reports
        .filter((r) => r.status !== "unreadable")
        .map((r) => r.status)
        .sort(),
    ).toEqual(["broken", "clean"]);
  });

  it("a thread whose messages are not LangChain messages (another serializer) is unreadable", async () => {
    const saver = new MemorySaver();
    const checkpoint = {
      v: 4,
      id: "1f000000-0000-6000-8000-000000000001",
      ts: new Date().toISOString(),
      channel_values: { messages: [{ role: "user", content: "hi" }] },
      channel_versions: { messages: 1 },
      versions_seen: {},
    };
    await saver.put({ configurable: { thread_id: "plain", checkpoint_ns: "" } }, checkpoint, {
      source: "loop",
      step: 0,
      parents: {},
    });
    const [report] = await collect({ saver, reopen: () => saver });
    expect(report).toMatchObject({
      threadId: "plain",
      status: "unreadable",
      error: expect.stringContaining("not LangChain messages"),
    });
  });
});

describe("scanThreads options", () => {
  const saver = new MemorySaver();
  // Refused at the call (up front), before any step: the async wrapper makes that a rejection to assert on.
  const first = async (options: unknown, on: unknown = saver) =>
    scanThreads(on as MemorySaver, options as ThreadScanOptions).next();
  it.each([
    [{ limit: 0 }, /options\.limit is 0; expected a positive integer/],
    [{ concurrency: 65 }, /options\.concurrency is 65; expected an integer from 1 to 64/],
    [{ provider: "bedrok" }, /options\.provider is "bedrok" \(did you mean "bedrock"\?\); expected one of/],
    [{ concurency: 2 }, /options\.concurency is not an option \(did you mean concurrency\?\)/],
    [{ since: new Date("nope") }, /options\.since is .*; expected a valid Date/],
    [{ threads: "t1" }, /options\.threads is .*; expected an array of thread id strings/],
    [{ messagesKey: "" }, /options\.messagesKey is .*; expected a non-empty string/],
  ])("%o is refused with a TypeError naming it", async (options, message) => {
    await expect(first(options)).rejects.toThrow(message);
  });
  it("a saver that is not one is refused", async () => {
    await expect(first({}, { getTuple() {} })).rejects.toThrow(TypeError);
  });
  it("a bad saver or option is refused at the call, before the first step, naming it", () => {
    expect(() => scanThreads({ getTuple() {} } as never)).toThrow(/scanThreads: saver .*without a list method/);
    expect(() => scanThreads(saver, { limit: 0 })).toThrow(/scanThreads: options\.limit is/);
    for (const shard of [{ index: 0, count: 2 }, { index: 3, count: 2 }, { index: 1.5, count: 2 }, null])
      expect(() => scanThreads(saver, { shard: shard as never })).toThrow(/scanThreads: options\.shard is/);
    // The values are shown, not only the keys: what is wrong is in them.
    expect(() => scanThreads(saver, { shard: { index: 3, count: 2 } })).toThrow(
      /options\.shard is \{index: 3, count: 2\}; expected/,
    );
    const getter = Object.defineProperty({}, "threads", {
      enumerable: true,
      get: () => {
        throw new Error("boom");
      },
    });
    // A throwing getter is no realistic input: the entry's boundary answers for it, naming the function.
    expect(() => scanThreads(saver, getter)).toThrow(
      expect.objectContaining({
        name: "ToolCallRepairInputError",
        argument: "arguments",
        message: expect.stringContaining("scanThreads: arguments could not be read (boom)"),
        cause: expect.any(Error),
      }),
    );
  });
  it("checkpoint ids sort by time: the bound for a date sits between ids made before and after it", () => {
    const bound = checkpointIdAt(new Date("2026-05-01T00:00:00Z"));
    expect(checkpointIdAt(new Date("2026-04-30T23:59:59.999Z")) < bound).toBe(true);
    expect(checkpointIdAt(new Date("2026-05-01T00:00:00.001Z")) > bound).toBe(true);
  });
  it("LangGraph's own checkpoint ids (uuid6) fall between the bounds of the milliseconds around them", () => {
    const before = new Date(Date.now() - 1);
    const id = uuid6(-1);
    const after = new Date(Date.now() + 1);
    expect(checkpointIdAt(before) <= id && id < checkpointIdAt(after)).toBe(true);
  });
});
