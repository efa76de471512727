/**
 * A deployment's threads through the Agent Server's API (LangGraph Platform, `langgraph dev`, any server the
 * `@langchain/langgraph-sdk` `Client` speaks to), with no access to its database: `threads.search` in pages, each
 * thread's latest checkpoint from `threads.getHistory` (its values without the pending writes `getState` folds in,
 * whose messages get a new random id on every read), judged as the store scans judge. A fix is one new checkpoint
 * through `threads.updateState` (the history kept): the messages reducer's remove-all, then the repaired list,
 * written as the tools node so the model runs next. Finished sibling results are put back from the `tasks[].result`
 * the history shows at the checkpoint their step was interrupted at, without the ids the server gave them.
 */
import type { BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { CheckpointTuple } from "@langchain/langgraph-checkpoint";
import type { Client, ThreadState } from "@langchain/langgraph-sdk";
import { boundary } from "../errors";
import { readMessage } from "../messages/coerce";
import { option, readOptions } from "../options";
import type { Dict } from "../values";
import { mapConcurrently } from "./concurrent";
import { fixOf, type ThreadRepairReport } from "./repair";
import type { ManifestLine, RevertReport } from "./revert";
import { resultsInWrites } from "./salvage";
import { failureText, judgeThread, SCAN_OPTIONS, unreadable, type ThreadReport, type ThreadScanOptions } from "./scan";
import { shardOf } from "./source";

export interface ApiThreadOptions extends Omit<ThreadScanOptions, "since"> {
  /** Only the threads whose metadata `graph_id` is this. */
  graphId?: string;
  /** Write the fixes. Default false: a dry run. */
  apply?: boolean;
  /** Wait for a busy thread's run to end instead of skipping it. Default false. */
  waitBusy?: boolean;
  /** Node a fix is written as (the one that runs the tools, so the model runs next). Default `"tools"`. */
  asNode?: string;
}

const API_OPTIONS = {
  ...SCAN_OPTIONS,
  graphId: option.name,
  apply: option.flag,
  waitBusy: option.flag,
  asNode: option.name,
};

/** Threads per `threads.search` page (the server's maximum is 1,000). */
export const API_PAGE_SIZE = 1000;

type Checkpoint = ThreadState<Dict>;
const configOf = (threadId: string, checkpoint_id: string) => ({
  configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id },
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The messages a fix writes: the reducer's remove-all first (a plain update would merge by id and append). */
const replacing = (messages: unknown[]) => [{ type: "remove", id: "__remove_all__" }, ...messages];

/** Every thread of the deployment (of `graphId`), page by page in a stable order (a repair moves `updated_at`). */
async function* threadsOf(client: Client, o: ApiThreadOptions) {
  for (let offset = 0; ; offset += API_PAGE_SIZE) {
    const page = await client.threads.search({
      limit: API_PAGE_SIZE,
      offset,
      sortBy: "thread_id",
      sortOrder: "asc",
      select: ["thread_id", "status", "metadata"],
      ...(o.graphId && { metadata: { graph_id: o.graphId } }),
      ...(o.threads && { ids: [...o.threads] }),
    });
    for (const thread of page) if (!o.shard || shardOf(thread.thread_id, o.shard.count) === o.shard.index) yield thread;
    if (page.length < API_PAGE_SIZE) return;
  }
}

/** The thread's latest checkpoint as the server stored it (undefined: never run). */
const latestOf = async (client: Client, threadId: string): Promise<Checkpoint | undefined> =>
  (await client.threads.getHistory<Dict>(threadId, { limit: 1 }))[0];

/** The checkpoint judged as the store scans judge a tuple: its id, time and messages (revived). */
function judged(threadId: string, latest: Checkpoint | undefined, o: ApiThreadOptions & { messagesKey: string }) {
  const key = { threadId, namespace: "" };
  const stored = latest?.values?.[o.messagesKey];
  const messages = Array.isArray(stored) ? stored.map(readMessage) : stored;
  const tuple = {
    config: configOf(threadId, latest?.checkpoint.checkpoint_id ?? ""),
    checkpoint: { ts: latest?.created_at, channel_values: { [o.messagesKey]: messages } },
  } as unknown as CheckpointTuple;
  const report = judgeThread(key, tuple, o);
  if (!latest) delete report.checkpointId;
  return { report, messages: messages as BaseMessage[] };
}

/**
 * Real results of `wanted` calls in the task results the history shows (finished tasks of a step that never
 * committed), newest checkpoint first; the id the server handed each is dropped (it was never stored).
 */
async function finishedResults(client: Client, threadId: string, messagesKey: string, wanted: Set<string>) {
  const found = new Map<string, ToolMessage>();
  // A checkpoint id, which the JS and the Python servers both take (the SDK's type says a config).
  let before: never | undefined;
  for (let page = 0; page < 20 && found.size < wanted.size; page++) {
    const states = await client.threads.getHistory<Dict>(threadId, { limit: 100, before });
    const writes = states.flatMap((s) =>
      (s.tasks ?? []).flatMap((t) => {
        const results = [(t.result as Dict | null)?.[messagesKey] ?? []].flat() as Dict[];
        return results.map((m) => ["", messagesKey, readMessage({ ...m, id: undefined }, 0)] as const);
      }),
    );
    for (const [id, result] of resultsInWrites(writes, messagesKey, wanted)) if (!found.has(id)) found.set(id, result);
    if (states.length < 100) break;
    before = states.at(-1)!.checkpoint.checkpoint_id as never;
  }
  return found;
}

/** A message as the API takes it: the dict the server gave for one the repair kept, the fields of a new one. */
const wireOf = (originals: Map<BaseMessage, unknown>) => (m: BaseMessage) =>
  originals.get(m) ?? { ...m.lc_kwargs, type: m.getType() };

/** Thread ids with their status and metadata, then each thread's report as it is read (`mode`: scan or repair). */
function apiThreads(client: Client, options: ApiThreadOptions, fn: string, repair: boolean) {
  const o = {
    messagesKey: "messages",
    concurrency: 4,
    asNode: "tools",
    ...readOptions<ApiThreadOptions>(options, fn, API_OPTIONS),
  };
  if (typeof client?.threads?.search !== "function")
    throw new TypeError(`langgraph-tool-repair: ${fn}: client must be a @langchain/langgraph-sdk Client`);
  let claimed = 0;
  const full = () => claimed === o.limit;
  type Thread = { thread_id: string; status: string };
  const one = async ({
    thread_id: threadId,
    status,
  }: Thread): Promise<ThreadReport | ThreadRepairReport | undefined> => {
    // A thread the server cannot give, or whose messages do not read as messages, is unreadable (as in a store).
    const read = await latestOf(client, threadId)
      .then((latest) => judged(threadId, latest, o))
      .catch((error) => ({ report: unreadable({ threadId, namespace: "" }, error), messages: [] }));
    if (!repair) return read.report;
    const report = (fields: Partial<ThreadRepairReport>) =>
      ({
        ...read.report,
        repairs: [],
        reshape: [],
        salvaged: [],
        found: read.report.status,
        ...fields,
      }) as ThreadRepairReport;
    try {
      const { status: found, provider, problems, error } = read.report;
      if (found === "unreadable") return report({ status: "unreadable", reason: error });
      if (found !== "broken") return report({ status: "unchanged", reshape: found === "reshape" ? problems : [] });
      if (full()) return;
      if (status === "interrupted")
        return report({
          status: "skipped",
          reason: "it waits at interrupt(): answer it with Command({ resume }) first",
        });
      for (; status === "busy" && o.waitBusy; await sleep(250)) status = (await client.threads.get(threadId)).status;
      if (status === "busy")
        return report({ status: "skipped", reason: "busy: a run is under way (wait for it, or --wait-busy)" });
      claimed++;
      const { fixed } = await fixOf(read.messages, provider, (wanted) =>
        finishedResults(client, threadId, o.messagesKey, wanted),
      );
      if (fixed.status) return report(fixed);
      if (!o.apply) return report({ ...fixed, status: "would_repair" });
      // Read again right before the write: a run that moved the thread on since is not overwritten.
      const latest = await latestOf(client, threadId);
      if (latest?.checkpoint.checkpoint_id !== read.report.checkpointId)
        return report({ ...fixed, status: "skipped", reason: "the thread moved on while it was read: run again" });
      const stored = latest?.values[o.messagesKey] as unknown[];
      const originals = new Map<BaseMessage, unknown>(read.messages.map((m, i) => [m, stored[i]]));
      const written = await client.threads.updateState(threadId, {
        values: { [o.messagesKey]: replacing(fixed.after.map(wireOf(originals))) },
        asNode: o.asNode,
      });
      const checkpointId = (written as { checkpoint?: { checkpoint_id?: string } }).checkpoint?.checkpoint_id ?? "";
      return report({ ...fixed, status: "repaired", written: configOf(threadId, checkpointId) });
    } catch (error) {
      const busy = (error as { status?: number }).status === 409;
      return report({
        status: busy ? "skipped" : "failed",
        reason: busy ? "busy: a run is under way" : failureText(error),
      });
    }
  };
  const stop = () => full() || !!o.signal?.aborted;
  return mapConcurrently(threadsOf(client, o), o.concurrency, one, stop);
}

/**
 * Scans (and with `apply`, repairs) every thread of a deployment through its API, one report per thread as it is
 * read: `repairThreads`' reports, with `found` the scan's verdict. A dry run unless `apply`; clean threads get no
 * checkpoint; a busy thread is skipped (or waited for, `waitBusy`), and so is one waiting at `interrupt()`.
 */
export const repairApiThreads = boundary(
  "repairApiThreads",
  (client: Client, options: ApiThreadOptions = {}) =>
    apiThreads(client, options, "repairApiThreads", true) as AsyncGenerator<ThreadRepairReport>,
);

/** The scan's reports (`scanThreads`' shape) of every thread of a deployment; nothing is written. */
export const scanApiThreads = (client: Client, options: ApiThreadOptions = {}) =>
  apiThreads(client, options, "scanApiThreads", false) as AsyncGenerator<ThreadReport>;

/** A fix undone (revert --manifest): the fix's parent's messages written back as one more checkpoint, as a fix is. */
async function revertApiThread(client: Client, messagesKey: string, asNode: string, line: ManifestLine) {
  const [head, previous] = await client.threads.getHistory<Dict>(line.thread, { limit: 2 });
  const messages = previous?.values[messagesKey];
  if (head?.checkpoint.checkpoint_id !== line.checkpointId)
    return `it moved on since the repair: its head is ${head?.checkpoint.checkpoint_id}, not ${line.checkpointId}`;
  if (previous?.checkpoint.checkpoint_id !== line.previousCheckpointId || !Array.isArray(messages))
    return `the checkpoint before the fix is not ${line.previousCheckpointId} with "${messagesKey}"`;
  const values = { [messagesKey]: replacing(messages) };
  return (await client.threads.updateState(line.thread, { values, asNode })) as { checkpoint?: Dict };
}

/** `revertThreads` through a deployment's API. */
export async function* revertApiThreads(
  client: Client,
  messagesKey: string,
  lines: readonly ManifestLine[],
  signal?: AbortSignal,
  asNode = "tools",
) {
  for (const line of lines) {
    if (signal?.aborted) return;
    yield await revertApiThread(client, messagesKey, asNode, line).then(
      (done): RevertReport =>
        typeof done === "string"
          ? { ...line, status: "skipped", reason: done }
          : { ...line, status: "reverted", revertedTo: String(done.checkpoint?.checkpoint_id) },
      (error): RevertReport => ({ ...line, status: "failed", reason: failureText(error) }),
    );
  }
}
