/**
 * `scanThreads` over 1,000 / 10,000 / 100,000 threads in a SqliteSaver file and a PostgresSaver schema, side by
 * side with the floor of reading them: every thread's latest checkpoint and messages in SQL pages of 1,000,
 * revived by the saver's own serializer (what any reader that judges LangChain messages pays). Then the same
 * store scanned by 1, 2 and 4 processes, one shard each. Memory above the start of the scan at every size.
 *
 * Seeding: two threads are made by real createAgent runs (ChatOpenAI against the local stub): a clean one of
 * four turns (20 messages) and one broken the production way (three turns, a fourth aborted mid-tool, then a
 * new message the provider refused). Their LATEST checkpoint rows (with the blobs and pending writes they point
 * at) are then copied in bulk SQL under N thread ids, one in 20 broken: the rows are the savers' own bytes, and
 * seeding 100,000 threads takes seconds instead of 100,000 agent runs. The scan reads only latest checkpoints,
 * so older ones would not change what is measured.
 *
 * Runs on its own: `node --env-file=scripts/quiet.env --expose-gc --import tsx bench/threads.ts`
 * (LGTR_BENCH_THREAD_SIZES=1000,10000 for other sizes: the floor and the shards are measured at 10,000 and
 * 100,000 only, any other size is the scan alone; LGTR_BENCH_THREAD_STORES=sqlite or postgres for one store).
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import pg from "pg";
import { scanThreads, type ThreadScanOptions } from "../src/threads/scan";
import { dropSchema, POSTGRES_URL, postgresUnavailable, uniqueSchema } from "../test/support/services";
import {
  buildSeedAgent,
  say,
  SeedTools,
  seedThreads,
  startSeedModel,
  threadConfig,
} from "../test/threads/support/seed";

/** LGTR_BENCH_THREAD_SIZES=1000,10000 runs fewer sizes. */
const SIZES = process.env.LGTR_BENCH_THREAD_SIZES?.split(",").map(Number) ?? [1_000, 10_000, 100_000];
/** LGTR_BENCH_THREAD_STORES=sqlite (or postgres) measures one store. */
const STORES = new Set(process.env.LGTR_BENCH_THREAD_STORES?.split(",") ?? ["sqlite", "postgres"]);
/** Sizes at which the floor and the shards are measured too. */
const FULL_SIZES = new Set([10_000, 100_000]);
const SHARD_COUNTS = [1, 2, 4];
/** The floor's page: the figure was measured with pages of 1,000. */
const FLOOR_PAGE = 1_000;
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
  db.exec(
    `${seq} INSERT INTO checkpoints SELECT printf('bench-%07d', n), c.checkpoint_ns, c.checkpoint_id, ` +
      `c.parent_checkpoint_id, c.type, c.checkpoint, c.metadata
    FROM seq JOIN checkpoints c ON c.thread_id = ${templateOf("n")} AND c.checkpoint_ns = '' AND c.checkpoint_id = ${latest}`,
  );
  db.exec(
    `${seq} INSERT INTO writes SELECT printf('bench-%07d', n), w.checkpoint_ns, w.checkpoint_id, ` +
      `w.task_id, w.idx, w.channel, w.type, w.value
    FROM seq JOIN writes w ON w.thread_id = ${templateOf("n")} AND w.checkpoint_ns = '' AND w.checkpoint_id = ${latest}`,
  );
  db.exec(
    "DELETE FROM checkpoints WHERE thread_id IN ('template-clean', 'broken-send-1'); DELETE FROM " +
      "writes WHERE thread_id IN ('template-clean', 'broken-send-1')",
  );
}

async function seedPostgres(client: pg.Client, schema: string, count: number): Promise<void> {
  const s = `"${schema}"`;
  const template = templateOf("g.n");
  const latest = `(SELECT MAX(checkpoint_id) FROM ${s}.checkpoints WHERE thread_id = ${template} AND checkpoint_ns = '')`;
  const name = "'bench-' || lpad(g.n::text, 7, '0')";
  await client.query(
    `INSERT INTO ${s}.checkpoints SELECT ${name}, c.checkpoint_ns, c.checkpoint_id, ` +
      `c.parent_checkpoint_id, c.type, c.checkpoint, c.metadata
    FROM generate_series(1, ${count}) AS g(n) JOIN ${s}.checkpoints c ` +
      `ON c.thread_id = ${template} AND c.checkpoint_ns = '' AND c.checkpoint_id = ${latest}`,
  );
  await client.query(
    `INSERT INTO ${s}.checkpoint_blobs SELECT ${name}, b.checkpoint_ns, b.channel, b.version, b.type, b.blob
    FROM generate_series(1, ${count}) AS g(n)
    JOIN ${s}.checkpoints c ON c.thread_id = ${template} AND c.checkpoint_ns = '' AND c.checkpoint_id = ${latest}
    JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') AS v(channel, version) ON true
    JOIN ${s}.checkpoint_blobs b ON b.thread_id = c.thread_id AND b.checkpoint_ns = '' ` +
      `AND b.channel = v.channel AND b.version = v.version`,
  );
  await client.query(
    `INSERT INTO ${s}.checkpoint_writes SELECT ${name}, w.checkpoint_ns, w.checkpoint_id, ` +
      `w.task_id, w.idx, w.channel, w.type, w.blob
    FROM generate_series(1, ${count}) AS g(n) JOIN ${s}.checkpoint_writes w ` +
      `ON w.thread_id = ${template} AND w.checkpoint_ns = '' AND w.checkpoint_id = ${latest}`,
  );
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
  /** The live heap (after a GC, above the start) when 1,000, 10,000, 100,000... threads had been read. */
  liveHeapAt: [threads: number, bytes: number][];
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
  const liveHeapAt: [number, number][] = [];
  const sample = () => {
    const now = process.memoryUsage();
    peakHeap = Math.max(peakHeap, now.heapUsed - start.heapUsed);
    peakRss = Math.max(peakRss, now.rss - start.rss);
  };
  const sampleLive = () => {
    gc?.();
    const live = process.memoryUsage().heapUsed - start.heapUsed;
    liveHeap = Math.max(liveHeap, live);
    return live;
  };
  let threads = 0;
  let broken = 0;
  let mark = 1_000;
  const began = performance.now();
  for await (const report of scanThreads(saver, options)) {
    threads++;
    if (report.status === "broken") broken++;
    if (threads % 250 === 0) sample();
    if (threads % 2_500 === 0) sampleLive();
    if (threads === mark) {
      liveHeapAt.push([threads, sampleLive()]);
      mark *= 10;
    }
  }
  const seconds = (performance.now() - began) / 1000;
  sample();
  sampleLive();
  return { threads, broken, seconds, liveHeap, liveHeapAt, peakHeap, peakRss };
}

/** The floor on SQLite: the latest checkpoint of every thread, pages of 1,000, revived by the saver's serializer. */
async function floorSqlite(saver: SqliteSaver): Promise<number> {
  const page = saver.db.prepare(
    `WITH page AS (SELECT thread_id, checkpoint_ns, MAX(checkpoint_id) AS checkpoint_id FROM checkpoints
       WHERE (thread_id, checkpoint_ns) > (?, ?) GROUP BY thread_id, checkpoint_ns ORDER BY thread_id, checkpoint_ns LIMIT ${FLOOR_PAGE})
     SELECT p.thread_id, p.checkpoint_ns, c.type, c.checkpoint
       FROM page p JOIN checkpoints c USING (thread_id, checkpoint_ns, checkpoint_id)
     ORDER BY p.thread_id, p.checkpoint_ns`,
  );
  let threads = 0;
  let after = ["", ""];
  for (;;) {
    const rows = page.all(...after) as {
      thread_id: string;
      checkpoint_ns: string;
      type: string;
      checkpoint: Uint8Array;
    }[];
    for (const row of rows) {
      const checkpoint = (await saver.serde.loadsTyped(row.type, row.checkpoint)) as {
        channel_values: { messages: unknown[] };
      };
      if (checkpoint.channel_values.messages.length > 0) threads++;
    }
    if (rows.length < FLOOR_PAGE) return threads;
    after = [rows[rows.length - 1].thread_id, rows[rows.length - 1].checkpoint_ns];
  }
}

/** The floor on PostgreSQL: each thread's latest checkpoint and its messages blob (bytea), pages of 1,000, revived. */
async function floorPostgres(saver: PostgresSaver, client: pg.Client, schema: string): Promise<number> {
  const s = `"${schema}"`;
  const page = `WITH page AS (SELECT thread_id, checkpoint_ns, MAX(checkpoint_id) AS checkpoint_id FROM ${s}.checkpoints
      WHERE (thread_id, checkpoint_ns) > ($1, $2) GROUP BY thread_id, checkpoint_ns ORDER BY thread_id, checkpoint_ns LIMIT ${FLOOR_PAGE})
    SELECT p.thread_id, p.checkpoint_ns, b.type, b.blob FROM page p
    JOIN ${s}.checkpoints c USING (thread_id, checkpoint_ns, checkpoint_id)
    JOIN ${s}.checkpoint_blobs b ON b.thread_id = p.thread_id AND b.checkpoint_ns = p.checkpoint_ns AND b.channel = 'messages'
      AND b.version = c.checkpoint -> 'channel_versions' ->> 'messages'
    ORDER BY p.thread_id, p.checkpoint_ns`;
  let threads = 0;
  let after = ["", ""];
  for (;;) {
    const { rows } = await client.query<{ thread_id: string; checkpoint_ns: string; type: string; blob: Buffer }>(
      page,
      after,
    );
    for (const row of rows) if (((await saver.serde.loadsTyped(row.type, row.blob)) as unknown[]).length > 0) threads++;
    if (rows.length < FLOOR_PAGE) return threads;
    after = [rows[rows.length - 1].thread_id, rows[rows.length - 1].checkpoint_ns];
  }
}

async function timed(fn: () => Promise<number>): Promise<{ threads: number; seconds: number }> {
  gc?.();
  const began = performance.now();
  const threads = await fn();
  return { threads, seconds: (performance.now() - began) / 1000 };
}

/**
 * The store scanned by `count` processes at once, one shard each (bench/scan-shard.ts): timed from the moment
 * every process has opened the store to the last one done. Threads per second over the whole store.
 */
type ShardRun = { threads: number; broken: number; seconds: number };

async function scanInShards(kind: "sqlite" | "postgres", where: string, count: number): Promise<ShardRun> {
  const children = Array.from({ length: count }, (_, i) =>
    spawn(
      process.execPath,
      ["--env-file=scripts/quiet.env", "--import", "tsx", "bench/scan-shard.ts", kind, where, `${i + 1}/${count}`],
      {
        stdio: ["pipe", "pipe", "inherit"],
      },
    ),
  );
  const lines = children.map((child) => {
    const out = createInterface({ input: child.stdout! });
    const iterator = out[Symbol.asyncIterator]();
    return async () => (await iterator.next()).value as string;
  });
  for (const next of lines) if ((await next()) !== "ready") throw new Error("a shard process did not start");
  const began = performance.now();
  for (const child of children) child.stdin!.write("go\n");
  const results = await Promise.all(
    lines.map(async (next) => JSON.parse(await next()) as { threads: number; broken: number }),
  );
  const seconds = (performance.now() - began) / 1000;
  await Promise.all(children.map((child) => (child.exitCode === null ? once(child, "exit") : undefined)));
  return {
    threads: results.reduce((n, r) => n + r.threads, 0),
    broken: results.reduce((n, r) => n + r.broken, 0),
    seconds,
  };
}

/** Where the run is, on stderr (the tables go to stdout). */
const note = (text: string) =>
  process.stderr.write(`[threads bench ${new Date().toISOString().slice(11, 19)}] ${text}\n`);

/** Megabytes above the start; a heap below where it started is 0 above it. */
const mb = (bytes: number) => `${(Math.max(0, bytes) / 1024 / 1024).toFixed(1)} MB`;
const count = (n: number) => n.toLocaleString("en-US");

const rate = (threads: number, seconds: number) => Math.round(threads / seconds);

interface SizeFigures {
  store: string;
  scan: ScanFigures;
  floor?: { threads: number; seconds: number };
  shards?: { count: number; threads: number; broken: number; seconds: number }[];
}

async function measureSize(
  store: string,
  saver: BaseCheckpointSaver,
  size: number,
  floor: () => Promise<number>,
  shardStore: ["sqlite" | "postgres", string],
): Promise<SizeFigures> {
  const figures: SizeFigures = { store, scan: await measureScan(saver) };
  if (!FULL_SIZES.has(size)) return figures;
  figures.floor = await timed(floor);
  figures.shards = [];
  for (const count of SHARD_COUNTS) figures.shards.push({ count, ...(await scanInShards(...shardStore, count)) });
  return figures;
}

export async function runThreadsBench(): Promise<string[]> {
  const results: SizeFigures[] = [];
  const dir = mkdtempSync(join(tmpdir(), "tool-repair-bench-"));
  let skipped: string | undefined;
  try {
    for (const size of STORES.has("sqlite") ? SIZES : []) {
      const file = join(dir, `threads-${size}.sqlite`);
      const saver = SqliteSaver.fromConnString(file);
      try {
        await makeTemplates(saver);
        note(`SQLite: seeding ${count(size)} threads`);
        seedSqlite(saver, size);
        note("SQLite: measuring");
        results.push(await measureSize("SQLite", saver, size, () => floorSqlite(saver), ["sqlite", file]));
      } finally {
        saver.db.close();
        rmSync(file, { force: true });
      }
    }

    if (STORES.has("postgres")) skipped = await postgresUnavailable();
    if (STORES.has("postgres") && !skipped)
      for (const size of SIZES) {
        const schema = uniqueSchema(`bench_${size}`);
        const saver = PostgresSaver.fromConnString(POSTGRES_URL, { schema });
        const client = new pg.Client({ connectionString: POSTGRES_URL });
        await client.connect();
        try {
          await saver.setup();
          await makeTemplates(saver);
          note(`PostgreSQL: seeding ${count(size)} threads`);
          await seedPostgres(client, schema, size);
          note("PostgreSQL: measuring");
          results.push(
            await measureSize("PostgreSQL", saver, size, () => floorPostgres(saver, client, schema), [
              "postgres",
              schema,
            ]),
          );
        } finally {
          await client.end();
          await saver.end();
          await dropSchema(schema);
        }
      }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const lines = ["## Scanning a store of threads (scanThreads, the `scan` command) against reading it"];
  lines.push(
    `Latest checkpoints of real createAgent threads (20 messages; 1 in ${BROKEN_EVERY} broken by an aborted run and a new`,
  );
  lines.push(
    "message), copied in bulk SQL under N thread ids. Floor: every thread's latest checkpoint and messages read in SQL",
  );
  lines.push(
    "pages of 1,000 and revived by the saver's serializer, one process. Scan: one process, the default options (the",
  );
  lines.push(
    "pre-check passes the clean threads without reviving them; the others are revived from the page's bytes and judged).",
  );
  lines.push(
    "Memory above the start of the scan: live heap = highest heap after a forced GC (every 2,500 threads), what the",
  );
  lines.push("scan keeps; peak RSS sampled every 250 threads. One run; the machine is shared, so read the ratios.");
  lines.push("");
  lines.push("| store | threads | broken found | floor: read + revive | scan | scan / floor | live heap | peak RSS |");
  lines.push("|---|---:|---:|---:|---:|---:|---:|---:|");
  for (const { store, scan, floor } of results) {
    const scanRate = rate(scan.threads, scan.seconds);
    const floorCell = floor ? `${count(rate(floor.threads, floor.seconds))}/s` : "";
    const ratio = floor ? `${(scanRate / rate(floor.threads, floor.seconds)).toFixed(1)}x` : "";
    const cells = [
      store,
      count(scan.threads),
      count(scan.broken),
      floorCell,
      `${count(scanRate)}/s`,
      ratio,
      mb(scan.liveHeap),
      mb(scan.peakRss),
    ];
    lines.push(`| ${cells.join(" | ")} |`);
  }
  if (skipped) lines.push(`| PostgreSQL | skipped: ${skipped} | | | | | | |`);
  lines.push("");
  // The largest scan of each store, as it went: flat when nothing is kept per thread.
  for (const store of new Set(results.map((r) => r.store))) {
    const { scan } = results.filter((r) => r.store === store).at(-1)!;
    const at = scan.liveHeapAt.map(([threads, bytes]) => `${mb(bytes)} after ${count(threads)}`).join(", ");
    lines.push(`Live heap of the ${store} scan of ${count(scan.threads)} threads as it went: ${at}.`);
  }
  lines.push("");
  if (!results.some((r) => r.shards)) return lines;
  const cores = availableParallelism();
  lines.push(
    `## The same stores scanned in shards (\`--shard i/n\`, n processes at once; this machine has ${cores} cores)`,
  );
  lines.push("Timed from every process having opened the store to the last one done; threads/s over the whole store.");
  lines.push("");
  const heads = [
    ...SHARD_COUNTS.map((n) => `${n} shard${n > 1 ? "s" : ""}`),
    ...SHARD_COUNTS.slice(1).map((n) => `${n} vs 1`),
  ];
  lines.push(`| store | threads | ${heads.join(" | ")} |`);
  lines.push(
    `|---|---:|${SHARD_COUNTS.map(() => "---:|").join("")}${SHARD_COUNTS.slice(1)
      .map(() => "---:|")
      .join("")}`,
  );
  for (const { store, shards } of results) {
    if (!shards) continue;
    const rates = shards.map((s) => rate(s.threads, s.seconds));
    const cells = [...rates.map((r) => `${count(r)}/s`), ...rates.slice(1).map((r) => `${(r / rates[0]).toFixed(2)}x`)];
    lines.push(`| ${store} | ${count(shards[0].threads)} | ${cells.join(" | ")} |`);
  }
  return lines;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1])
  console.log((await runThreadsBench()).join("\n"));
