/**
 * Healing a deployment through the Agent Server's API, against the real server (`langgraph dev`, in memory, on
 * 127.0.0.1) deploying graphs that do not use the package (test/threads/support/platform): a createAgent graph and
 * a StateGraph + ToolNode graph, both on the real ChatOpenAI pointed at the strict OpenAI stub. Threads are broken
 * the ways a deployment breaks them (runs.cancel, a multitask interrupt, a client that disconnects, each followed
 * by a new message the provider refuses), next to clean ones, one left open by a cancel and one never run.
 */
import { readFileSync } from "node:fs";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repairApiThreads, scanApiThreads } from "../../src/threads/api";
import type { ThreadRepairReport } from "../../src/threads/repair";
import type { ThreadReport } from "../../src/threads/scan";
import { startOpenAIStub, type RunningStub } from "../support/stubs";
import { jsonLines, manifestPath, runCliHere } from "../cli/support/run-cli";
import { agentServerOrReason, freePort, type AgentServer } from "./support/agent-server";

type Wire = { role: string; content: unknown; tool_call_id?: string; tool_calls?: { id: string }[] };
const messagesOf = (request: unknown) => (request as { messages: Wire[] }).messages;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The deployment's key (test/threads/support/platform/auth.ts refuses any other). */
const KEY = "lgtr-test-key-1234";
let stub: RunningStub;
let server: AgentServer | string;
let client: Client;

beforeAll(async () => {
  // "slow ...": two calls, one done in 20 ms and one in 3 s (so a run can be broken while it waits); else text.
  stub = await startOpenAIStub({
    script: (request) =>
      String(messagesOf(request).at(-1)?.content).startsWith("slow")
        ? {
            toolCalls: [
              { name: "wait", args: { ms: 20 } },
              { name: "wait", args: { ms: 3000 } },
            ],
          }
        : { text: "ok" },
  });
  server = await agentServerOrReason({ LGTR_STUB_URL: stub.url, LGTR_API_KEY: KEY });
  if (typeof server !== "string") client = new Client({ apiUrl: server.url, apiKey: KEY });
}, 120_000);

afterAll(async () => {
  if (typeof server !== "string") await server?.close();
  await stub?.close();
});

const input = (text: string) => ({ messages: [{ role: "user", content: text }] });

/** A new thread of `graph` whose run is under way, past the model's calls (the 20 ms call has finished). */
async function runningThread(graph: string, tag: string) {
  const threadId = (await client.threads.create({ graphId: graph })).thread_id;
  const run = await client.runs.create(threadId, graph, { input: input(`slow ${tag}`) });
  for (let i = 0; i < 200; i++) {
    const { values } = await client.threads.getState<{ messages?: Wire[] }>(threadId);
    if (values.messages?.some((m) => m.tool_calls?.length)) break;
    await sleep(50);
  }
  await sleep(300);
  return { threadId, run };
}

/** A new message on a thread whose calls were left unanswered: the provider refuses it, the run errors. */
async function newMessageRefused(threadId: string, graph: string, tag: string) {
  await expect(client.runs.wait(threadId, graph, { input: input(`hello ${tag}`) })).rejects.toThrow(/tool_call_ids/);
}

const historyLength = async (threadId: string) => (await client.threads.getHistory(threadId, { limit: 1000 })).length;
const collect = async <T>(it: AsyncIterable<T>) => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};

describe("a deployment healed through the Agent Server's API", () => {
  it("scan names the broken threads; repair adds one checkpoint to each; the provider takes the next message", async (context) => {
    if (typeof server === "string") return context.skip(server);
    const broken: Record<string, string> = {};
    // runs.cancel of the createAgent graph mid-tools, then a new message.
    const cancelled = await runningThread("agent", "cancel");
    await client.runs.cancel(cancelled.threadId, cancelled.run.run_id, true, "interrupt");
    await newMessageRefused(cancelled.threadId, "agent", "cancel");
    broken.cancel = cancelled.threadId;
    // A multitask interrupt of the ToolNode graph: the new run is the new message.
    const interrupted = await runningThread("toolnode", "multitask");
    await expect(
      client.runs.wait(interrupted.threadId, "toolnode", {
        input: input("hello multitask"),
        multitaskStrategy: "interrupt",
      }),
    ).rejects.toThrow(/tool_call_ids/);
    broken.multitask = interrupted.threadId;
    // A streaming client that disconnects (onDisconnect cancel), then a new message.
    const disconnect = new AbortController();
    const streamed = (await client.threads.create({ graphId: "agent" })).thread_id;
    const stream = client.runs.stream(streamed, "agent", {
      input: input("slow disconnect"),
      onDisconnect: "cancel",
      signal: disconnect.signal,
    });
    const reading = (async () => {
      for await (const _ of stream);
    })().catch(() => {});
    for (let i = 0; i < 200; i++) {
      const { values } = await client.threads.getState<{ messages?: Wire[] }>(streamed);
      if (values.messages?.some((m) => m.tool_calls?.length)) break;
      await sleep(50);
    }
    disconnect.abort();
    await reading;
    for (let i = 0; i < 100 && (await client.threads.get(streamed)).status === "busy"; i++) await sleep(100);
    await newMessageRefused(streamed, "agent", "disconnect");
    broken.disconnect = streamed;
    // Clean threads of both graphs, one left open by a cancel (a resume still runs its tools), one never run.
    const clean: string[] = [];
    for (const graph of ["agent", "toolnode"]) {
      const threadId = (await client.threads.create({ graphId: graph })).thread_id;
      await client.runs.wait(threadId, graph, { input: input(`hi ${graph}`) });
      clean.push(threadId);
    }
    const open = await runningThread("agent", "open");
    await client.runs.cancel(open.threadId, open.run.run_id, true, "interrupt");
    const neverRun = (await client.threads.create()).thread_id;

    const scan = await collect(scanApiThreads(client));
    const by = <R extends ThreadReport | ThreadRepairReport>(reports: R[], id: string) =>
      reports.find((r) => r.threadId === id)!;
    expect(
      scan
        .filter((r) => r.status === "broken")
        .map((r) => r.threadId)
        .sort(),
    ).toEqual(Object.values(broken).sort());
    expect(by(scan, open.threadId).status).toBe("open");
    expect(by(scan, neverRun).status).toBe("no_messages");
    for (const id of clean) expect(by(scan, id).status).toBe("clean");

    const lengths = new Map(
      await Promise.all(
        [...clean, open.threadId, ...Object.values(broken)].map(async (id) => [id, await historyLength(id)] as const),
      ),
    );
    const dry = await collect(repairApiThreads(client));
    expect(
      dry
        .filter((r) => r.status === "would_repair")
        .map((r) => r.threadId)
        .sort(),
    ).toEqual(Object.values(broken).sort());
    for (const [id, n] of lengths) expect(await historyLength(id)).toBe(n); // a dry run writes nothing

    const repaired = await collect(repairApiThreads(client, { apply: true }));
    expect(
      repaired
        .filter((r) => r.status === "repaired")
        .map((r) => r.threadId)
        .sort(),
    ).toEqual(Object.values(broken).sort());
    expect(by(repaired, neverRun)).toMatchObject({ status: "unchanged", found: "no_messages" });
    for (const id of [...clean, open.threadId]) {
      expect(by(repaired, id).status).toBe("unchanged");
      expect(await historyLength(id)).toBe(lengths.get(id)); // no new checkpoint
    }
    for (const id of Object.values(broken)) {
      const [latest, parent] = await client.threads.getHistory(id, { limit: 2 });
      expect(latest.metadata?.source).toBe("update");
      expect(parent.checkpoint.checkpoint_id).toBe(by(repaired, id).checkpointId);
      expect(latest.checkpoint.checkpoint_id).toBe(by(repaired, id).written?.configurable?.checkpoint_id);
      expect(await historyLength(id)).toBe(lengths.get(id)! + 1); // the history kept, one checkpoint on top
    }
    // The createAgent graph runs each call as its own task: the call that finished before the cancel is put back.
    const salvaged = by(repaired, broken.cancel);
    expect(salvaged.salvaged).toHaveLength(1);
    expect(salvaged.after?.map((m) => m.content)).toContain("waited 20 ms");

    expect((await collect(scanApiThreads(client))).filter((r) => r.status === "broken")).toEqual([]);

    // The next message on each repaired thread: the strict stub accepts it, and was sent every call answered.
    const rejected = stub.rejections.length;
    for (const [tag, id] of Object.entries(broken)) {
      const graph = tag === "multitask" ? "toolnode" : "agent";
      await client.runs.wait(id, graph, { input: input(`again ${tag}`) });
      const sent = messagesOf(
        [...stub.requests].reverse().find((r) => messagesOf(r).at(-1)?.content === `again ${tag}`),
      );
      const calls = sent.flatMap((m) => m.tool_calls?.map((c) => c.id) ?? []);
      expect(calls).toHaveLength(2);
      expect(
        sent
          .filter((m) => m.role === "tool")
          .map((m) => m.tool_call_id)
          .sort(),
      ).toEqual([...calls].sort());
      if (tag === "cancel") expect(sent.map((m) => m.content)).toContain("waited 20 ms");
    }
    expect(stub.rejections.length).toBe(rejected);
  }, 120_000);

  it("the command: scan, repair --apply with its manifest, revert --manifest, through --api", async (context) => {
    if (typeof server === "string") return context.skip(server);
    const api = ["--api", server.url, "--api-key", KEY];
    const { threadId, run } = await runningThread("agent", "cli");
    await client.runs.cancel(threadId, run.run_id, true, "interrupt");
    await newMessageRefused(threadId, "agent", "cli");
    const before = (await client.threads.getHistory<{ messages: Wire[] }>(threadId, { limit: 1 }))[0];
    const scan = await runCliHere(["scan", ...api, "--json"]);
    expect(scan.code).toBe(1);
    expect(
      jsonLines(scan.stdout)
        .filter((r) => r.status === "broken")
        .map((r) => r.thread),
    ).toEqual([threadId]);
    expect(scan.stdout + scan.stderr).not.toContain(KEY);
    // --shard: every thread in exactly one shard.
    const ids = (stdout: string) => jsonLines(stdout).map((r) => r.thread as string);
    const shards = await Promise.all(
      ["1/2", "2/2"].map((shard) => runCliHere(["scan", ...api, "--json", "--shard", shard])),
    );
    expect([...ids(shards[0].stdout), ...ids(shards[1].stdout)].sort()).toEqual(ids(scan.stdout).sort());
    expect(ids(shards[0].stdout).length * ids(shards[1].stdout).length).toBeGreaterThan(0);

    const manifest = manifestPath();
    const repair = await runCliHere(["repair", ...api, "--apply", "--yes", "--manifest", manifest]);
    expect(repair.code).toBe(0);
    expect(repair.stdout).toMatch(/\b1 {2}repaired/);
    const [line] = readFileSync(manifest, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const [latest, previous] = await client.threads.getHistory(threadId, { limit: 2 });
    expect(line).toEqual({
      thread: threadId,
      namespace: "",
      previousCheckpointId: previous.checkpoint.checkpoint_id,
      checkpointId: latest.checkpoint.checkpoint_id,
    });
    expect((await runCliHere(["scan", ...api])).code).toBe(0);

    // The key from the environment; the thread's messages are those before the fix again, one checkpoint on top.
    const revert = await runCliHere(["revert", "--api", server.url, "--manifest", manifest, "--yes"], {
      env: { LANGGRAPH_API_KEY: KEY },
    });
    expect(revert.code).toBe(0);
    const [reverted, fix] = await client.threads.getHistory<{ messages: Wire[] }>(threadId, { limit: 2 });
    expect(fix.checkpoint.checkpoint_id).toBe(line.checkpointId);
    expect(reverted.values.messages).toEqual(before.values.messages);
    expect((await runCliHere(["scan", ...api, "--thread", threadId])).code).toBe(1);
  }, 60_000);

  it("bad input is one line and exit 2: an unreachable server, a wrong key, a graph with no messages", async (context) => {
    if (typeof server === "string") return context.skip(server);
    const closed = await freePort(); // bound, then released: nothing listens there
    const bad = [
      [
        ["--api", `http://127.0.0.1:${closed}`, "--api-key", KEY],
        /^langgraph-tool-repair: --api http:\/\/127\.0\.0\.1:\d+: /,
      ],
      [["--api", server.url, "--api-key", "wrong-key"], /--api http:\/\/127\.0\.0\.1:\d+: the key was refused/],
      [["--api", server.url], /the key was refused/],
    ] as const;
    for (const [flags, error] of bad) {
      const run = await runCliHere(["scan", ...flags]);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(error);
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
    }
    const counted = (await client.threads.create({ graphId: "counter" })).thread_id;
    await client.runs.wait(counted, "counter", { input: { count: 1 } });
    const run = await runCliHere(["scan", "--api", server.url, "--api-key", KEY, "--graph-id", "counter"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^langgraph-tool-repair: --messages-key messages: no thread holds it/);
  }, 60_000);
});
