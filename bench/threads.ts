/**
 * `scanThreads` over 1,000 / 10,000 / 100,000 threads in a SqliteSaver file and a PostgresSaver schema:
 * throughput, peak memory above the start of the scan, and the scan's own work against the saver's reads.
 *
 * Seeding: two threads are made by real createAgent runs (ChatOpenAI against the local stub): a clean one of
 * four turns (20 messages) and one broken the production way (three turns, a fourth aborted mid-tool, then a
 * new message the provider refused). Their LATEST checkpoint rows (with the blobs and pending writes they point
 * at) are then copied in SQL under N thread ids, one in 20 broken: the rows are the savers' own bytes, and
 * seeding 100,000 threads takes seconds instead of 100,000 agent runs. The scan reads only latest checkpoints,
 * so older ones would not change what is measured.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import pg from "pg";
import { scanThreads, type ThreadScanOptions } from "../src/threads/scan";
import { dropSchema, POSTGRES_URL, postgresUnavailable, uniqueSchema } from "../test/support/services";
import { buildSeedAgent, say, SeedTools, seedThreads, startSeedModel, threadConfig } from "../test/threads/support/seed";
import { fmt } from "./harness";

/** LGTR_BENCH_THREAD_SIZES=1000,10000 runs fewer sizes. */
const SIZES = process.env.LGTR_BENCH_THREAD_SIZES?.split(",").map(Number) ?? [1_000, 10_000, 100_000];
/** Sizes at which the scan's own work is timed against the saver's reads (one thread at a time). */
const SPLIT_SIZES = new Set([10_000]);
const BROKEN_EVERY = 20;

/** The two template threads, made by real runs in `saver`. */
async function makeTemplates(saver: BaseCheckpointSaver): Promise<void> {
  const model = await startSeedModel("openai");
  try {
    const tools = new SeedTools();
    const agent = buildSeedAgent("createAgent", model, tools, saver);
    const invoke = (agent.invoke as (input: unknown, config: RunnableConfig) => Promise<unknown>).bind(agent);
    for (let turn = 1; turn <= 4; turn++) await invoke(say(`turn ${turn}`), threadConfig("template-clean"));
    for (let turn = 1; turn <= 3; turn++) await invoke(say(`turn ${turn}`), threadConfig("broken-send-1"));
    await seedThreads(saver, model, { brokenSend: 1 }); // its fourth turn: aborted mid-tool, then refused
  } finally {
    await model.stub.close();
  }
}

const templateOf = (n: string) => `CASE WHEN ${n} % ${BROKEN_EVERY} = 0 THEN 'broken-send-1' ELSE 'template-clean' END`;

function seedSqlite(saver: SqliteSaver, count: number): void {
  const db = saver.db;
  const seq = `WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < ${count})`;
  const latest = `(SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = ${templateOf("n")} AND checkpoint_ns = '')`;
  db.exec(`${seq} INSERT INTO checkpoints SELECT printf('bench-%07d', n), c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.type, c.checkpoint, c.metadata
    FROM seq JOIN checkpoints c ON c.thread_id = ${templateOf("n")} AND c.checkpoint_ns = '' AND c.checkpoint_id = ${latest}`);
  db.exec(`${seq} INSERT INTO writes SELECT printf('bench-%07d', n), w.checkpoint_ns, w.checkpoint_id, w.task_id, w.idx, w.channel, w.type, w.value
    FROM seq JOIN writes w ON w.thread_id = ${templateOf("n")} AND w.checkpoint_ns = '' AND w.checkpoint_id = ${latest}`);
  db.exec("DELETE FROM checkpoints WHERE thread_id IN ('template-clean', 'broken-send-1'); DELETE FROM writes WHERE thread_id IN ('template-clean', 'broken-send-1')");
}

async function seedPostgres(client: pg.Client, schema: string, count: number): Promise<void> {
  const s = `"${schema}"`;
  const template = templateOf("g.n");
  const latest = `(SELECT MAX(checkpoint_id) FROM ${s}.checkpoints WHERE thread_id = ${template} AND checkpoint_ns = '')`;
  const name = "'bench-' || lpad(g.n::text, 7, '0')";
  await client.query(`INSERT INTO ${s}.checkpoints SELECT ${name}, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.type, c.checkpoint, c.metadata
    FROM generate_series(1, ${count}) AS g(n) JOIN ${s}.checkpoints c ON c.thread_id = ${template} AND c.checkpoint_ns = '' AND c.checkpoint_id = ${latest}`);
  await client.query(`INSERT INTO ${s}.checkpoint_blobs SELECT ${name}, b.checkpoint_ns, b.channel, b.version, b.type, b.blob
    FROM generate_series(1, ${count}) AS g(n)
    JOIN ${s}.checkpoints c ON c.thread_id = ${template} AND c.checkpoint_ns = '' AND c.checkpoint_id = ${latest}
    JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') AS v(channel, version) ON true
    JOIN ${s}.checkpoint_blobs b ON b.thread_id = c.thread_id AND b.checkpoint_ns = '' AND b.channel = v.channel AND b.version = v.version`);
  await client.query(`INSERT INTO ${s}.checkpoint_writes SELECT ${name}, w.checkpoint_ns, w.checkpoint_id, w.task_id, w.idx, w.channel, w.type, w.blob
    FROM generate_series(1, ${count}) AS g(n) JOIN ${s}.checkpoint_writes w ON w.thread_id = ${template} AND w.checkpoint_ns = '' AND w.checkpoint_id = ${latest}`);
  for (const table of ["checkpoints", "checkpoint_blobs", "checkpoint_writes"])
    await client.query(`DELETE FROM ${s}.${table} WHERE thread_id IN ('template-clean', 'broken-send-1')`);
  await client.query(`ANALYZE ${s}.checkpoints; ANALYZE ${s}.checkpoint_blobs; ANALYZE ${s}.checkpoint_writes`);
}

interface ScanFigures {
  threads: number;
  broken: number;
  seconds: number;
  /** Highest heap in use after a GC, above the start: what the scan keeps alive. */
  liveHeap: number;
  /** Highest heap in use (garbage included) and resident set, above the start. */
  peakHeap: number;
  peakRss: number;
}

const gc = (globalThis as { gc?: () => void }).gc;

/**
 * A full scan; memory against the start of the scan (after a GC): sampled every 250 threads, and every 2,500
 * threads after a forced GC (the live heap, which stays flat when nothing is kept per thread).
 */
async function measureScan(saver: BaseCheckpointSaver, options: ThreadScanOptions = {}): Promise<ScanFigures> {
  gc?.();
  const start = process.memoryUsage();
  let peakHeap = 0;
  let peakRss = 0;
  let liveHeap = 0;
  const sample = () => {
    const now = process.memoryUsage();
    peakHeap = Math.max(peakHeap, now.heapUsed - start.heapUsed);
    peakRss = Math.max(peakRss, now.rss - start.rss);
  };
  const sampleLive = () => {
    gc?.();
    liveHeap = Math.max(liveHeap, process.memoryUsage().heapUsed - start.heapUsed);
  };
  let threads = 0;
  let broken = 0;
  const began = performance.now();
  for await (const report of scanThreads(saver, options)) {
    threads++;
    if (report.status === "broken") broken++;
    if (threads % 250 === 0) sample();
    if (threads % 2_500 === 0) sampleLive();
  }
  const seconds = (performance.now() - began) / 1000;
  sample();
  sampleLive();
  return { threads, broken, seconds, liveHeap, peakHeap, peakRss };
}

/**
 * One thread at a time, `getTuple` timed inside the saver: the saver's read time, and everything else the scan
 * does (key pages, judging each thread, reporting) as the rest of the wall time.
 */
async function measureSplit(saver: BaseCheckpointSaver): Promise<{ read: number; own: number; threads: number }> {
  let read = 0;
  const timed = new Proxy(saver, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (property !== "getTuple") return typeof value === "function" ? value.bind(target) : value;
      return async (config: RunnableConfig) => {
        const began = performance.now();
        try {
          return await target.getTuple(config);
        } finally {
          read += performance.now() - began;
        }
      };
    },
  });
  const began = performance.now();
  let threads = 0;
  for await (const _ of scanThreads(timed, { concurrency: 1 })) threads++;
  const total = performance.now() - began;
  return { read, own: total - read, threads };
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const count = (n: number) => n.toLocaleString("en-US");

export async function runThreadsBench(): Promise<string[]> {
  const lines = ["## Scanning a store of threads (scanThreads, the `scan` command)"];
  lines.push(`Latest checkpoints of real createAgent threads (20 messages; 1 in ${BROKEN_EVERY} broken by an aborted run and a new`);
  lines.push("message), copied in SQL under N thread ids. Four threads read at a time (the default). Memory above the start");
  lines.push("of the scan: live heap = highest heap after a forced GC (every 2,500 threads), what the scan keeps; peak heap and");
  lines.push("RSS sampled every 250 threads (garbage not yet collected and the drivers' caches included).");
  lines.push("");
  lines.push("| store | threads | broken found | time | threads/s | live heap | peak heap | peak RSS |");
  lines.push("|---|---:|---:|---:|---:|---:|---:|---:|");
  const split: string[] = [];

  const dir = mkdtempSync(join(tmpdir(), "tool-repair-bench-"));
  try {
    for (const size of SIZES) {
      const file = join(dir, `threads-${size}.sqlite`);
      const saver = SqliteSaver.fromConnString(file);
      await makeTemplates(saver);
      seedSqlite(saver, size);
      const figures = await measureScan(saver);
      lines.push(`| SQLite | ${count(figures.threads)} | ${count(figures.broken)} | ${figures.seconds.toFixed(1)} s | ${count(Math.round(figures.threads / figures.seconds))} | ${mb(figures.liveHeap)} | ${mb(figures.peakHeap)} | ${mb(figures.peakRss)} |`);
      if (SPLIT_SIZES.has(size)) split.push(splitRow("SQLite", await measureSplit(saver)));
      saver.db.close();
      rmSync(file, { force: true });
    }

    const unavailable = await postgresUnavailable();
    if (unavailable) lines.push(`| PostgreSQL | skipped: ${unavailable} | | | | | | |`);
    else
      for (const size of SIZES) {
        const schema = uniqueSchema(`bench_${size}`);
        const saver = PostgresSaver.fromConnString(POSTGRES_URL, { schema });
        const client = new pg.Client({ connectionString: POSTGRES_URL });
        await client.connect();
        try {
          await saver.setup();
          await makeTemplates(saver);
          await seedPostgres(client, schema, size);
          const figures = await measureScan(saver);
          lines.push(`| PostgreSQL | ${count(figures.threads)} | ${count(figures.broken)} | ${figures.seconds.toFixed(1)} s | ${count(Math.round(figures.threads / figures.seconds))} | ${mb(figures.liveHeap)} | ${mb(figures.peakHeap)} | ${mb(figures.peakRss)} |`);
          if (SPLIT_SIZES.has(size)) split.push(splitRow("PostgreSQL", await measureSplit(saver)));
        } finally {
          await client.end();
          await saver.end();
          await dropSchema(schema);
        }
      }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  lines.push("");
  lines.push("## The scan's own work against the saver's reads (10,000 threads, one at a time)");
  lines.push("`getTuple` timed inside the saver; the scan's own work is the rest of the wall time (key pages, judging each");
  lines.push("thread, reporting).");
  lines.push("");
  lines.push("| store | saver reads, per thread | scan's own work, per thread | own work / reads |");
  lines.push("|---|---:|---:|---:|");
  lines.push(...split);
  return lines;
}

function splitRow(store: string, { read, own, threads }: { read: number; own: number; threads: number }): string {
  return `| ${store} | ${fmt((read * 1e6) / threads)} | ${fmt((own * 1e6) / threads)} | ${((100 * own) / read).toFixed(1)}% |`;
}
