/**
 * One shard of a scan, as one process of a sharded run does it (bench/threads.ts starts n of them): opens the
 * store, says "ready", waits for a line on stdin, scans its shard, prints what it read and how long it took.
 * Usage: node --import tsx bench/scan-shard.ts sqlite FILE|postgres SCHEMA I/N
 */
import { once } from "node:events";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { scanThreads } from "../src/threads/scan";
import { POSTGRES_URL } from "../test/support/services";

const [kind, where, shardText] = process.argv.slice(2);
const [index, count] = shardText.split("/").map(Number);
const saver: BaseCheckpointSaver =
  kind === "sqlite" ? SqliteSaver.fromConnString(where) : PostgresSaver.fromConnString(POSTGRES_URL, { schema: where });
process.stdout.write("ready\n");
await once(process.stdin, "data");
const began = performance.now();
let threads = 0;
let broken = 0;
for await (const report of scanThreads(saver, { shard: { index, count } })) {
  threads++;
  if (report.status === "broken") broken++;
}
process.stdout.write(`${JSON.stringify({ threads, broken, ms: performance.now() - began })}\n`);
if (saver instanceof SqliteSaver) saver.db.close();
else await (saver as PostgresSaver).end();
process.stdin.destroy();
