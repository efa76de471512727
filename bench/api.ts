/**
 * `scanApiThreads` against the local Agent Server (`langgraph dev`, in memory, on 127.0.0.1): threads per second
 * and the live heap after a GC, above the start of the scan, for 500 and 2,000 threads (one in 20 broken: a user
 * message after an unanswered call), seeded through `threads.updateState`. `threads.search` pages and one
 * `getHistory` per thread: memory does not grow with the number of threads.
 *
 * Runs on its own: `node --env-file=scripts/quiet.env --expose-gc --import tsx bench/api.ts`.
 */
import { Client } from "@langchain/langgraph-sdk";
import { scanApiThreads } from "../src/threads/api";
import { startOpenAIStub } from "../test/support/stubs";
import { startAgentServer } from "../test/threads/support/agent-server";

const SIZES = [500, 2_000];
const KEY = "lgtr-bench-key";

const ai = (id: string) => ({
  type: "ai",
  content: "",
  id: `ai-${id}`,
  tool_calls: [{ id, name: "wait", args: { ms: 1 } }],
});
const thread = (i: number) => {
  const call = `call_${i}`;
  const answered = [{ type: "tool", content: "waited", tool_call_id: call, name: "wait" }];
  return [
    { type: "human", content: `question ${i}` },
    ai(call),
    ...(i % 20 === 0 ? [] : answered),
    { type: "human", content: "next" },
    { type: "ai", content: "ok" },
  ];
};

async function seed(client: Client, from: number, to: number) {
  const ids: number[] = [];
  for (let i = from; i < to; i++) ids.push(i);
  const one = async (i: number) => {
    const { thread_id } = await client.threads.create({ graphId: "agent" });
    await client.threads.updateState(thread_id, { values: { messages: thread(i) }, asNode: "model_request" });
  };
  for (let at = 0; at < ids.length; at += 16) await Promise.all(ids.slice(at, at + 16).map(one));
}

const mb = (bytes: number) => `${(Math.max(0, bytes) / 2 ** 20).toFixed(1)} MB`;

export async function runApiBench(): Promise<string[]> {
  const stub = await startOpenAIStub();
  const server = await startAgentServer({ LGTR_STUB_URL: stub.url, LGTR_API_KEY: KEY }).catch((error: Error) => error);
  if (server instanceof Error) {
    await stub.close();
    return ["## Agent Server API scan", "", `skipped: ${server.message.split("\n")[0]}`];
  }
  const lines = [
    "## Agent Server API scan (`scanApiThreads`, local `langgraph dev`, in memory)",
    "",
    "| threads | broken | time | threads/s | live heap after GC |",
    "|---:|---:|---:|---:|---:|",
  ];
  try {
    const client = new Client({ apiUrl: server.url, apiKey: KEY });
    let seeded = 0;
    for (const size of SIZES) {
      await seed(client, seeded, size);
      seeded = size;
      globalThis.gc?.();
      const start = process.memoryUsage().heapUsed;
      const began = performance.now();
      let broken = 0;
      let read = 0;
      for await (const report of scanApiThreads(client, { concurrency: 8 })) {
        read++;
        if (report.status === "broken") broken++;
      }
      const seconds = (performance.now() - began) / 1000;
      globalThis.gc?.();
      const live = process.memoryUsage().heapUsed - start;
      lines.push(`| ${read} | ${broken} | ${seconds.toFixed(1)} s | ${Math.round(read / seconds)} | ${mb(live)} |`);
    }
  } finally {
    await server.close();
    await stub.close();
  }
  return lines;
}

if (import.meta.url === `file://${process.argv[1]}`) console.log((await runApiBench()).join("\n"));
