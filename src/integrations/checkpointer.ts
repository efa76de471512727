/**
 * `withToolCallRepair(checkpointer)`: any `BaseCheckpointSaver`, repairing stored threads as they go through it.
 *
 * Where it may act (LANGGRAPH_NOTES.md, "Resume versus new input"):
 * - `getTuple` cannot tell a resume from a new input, so on read it repairs everything EXCEPT the last exchange
 *   while that one still has unanswered calls (a resume runs them). What it returns becomes the run's state.
 * - A `put` of a new input's checkpoint (`source: "input"` holding the input in `__start__`) means LangGraph has
 *   discarded the pending step: the stored thread gets its open calls closed, and results of sibling calls
 *   that did finish (pending writes of the parent checkpoint) are put back as the real ToolMessages.
 * - The rest of that run keeps writing its stale in-memory list, so each later `put` of the same run (it names
 *   the previous one as parent) is repaired the same way, and reported only once.
 * - A user message stored in `__start__` but never applied (its run was aborted before the first step) is
 *   dropped by LangGraph when a new input comes: a read puts it into the messages already (with the same id in
 *   `__start__`, so a resume applying it replaces it in place), and the run's model sees it.
 * - A clean `put` holding our marked placeholders (a surface closed the calls itself; with `durability: "exit"`
 *   this is the run's only write) gets the real results still in its parent's pending writes instead. Each
 *   placeholder is looked up once per process, so old placeholders cost no read on later writes.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import type { BaseMessage, ToolMessage } from "@langchain/core/messages";
import type {
  BaseCheckpointSaver,
  ChannelVersions,
  Checkpoint,
  CheckpointMetadata,
  CheckpointTuple,
} from "@langchain/langgraph-checkpoint";
import { readMessage } from "../messages/coerce";
import { unansweredCallIds } from "../messages/exchanges";
import { isMarkedSyntheticResult, isToolResult, resultIdOf } from "../messages/inspect";
import { evictOldest, firstTime, orFallback, reportRepairs, type RepairReporting } from "./events";
import { createStoredRepairer, SAVER_METHODS, type StoredRepairOptions } from "../threads/repair-thread";
import { resultsInWrites } from "../threads/salvage";
import { withUniqueIds } from "./state-update";
import { nextBranchVersion } from "./checkpoint-versions";
import { addCancelled, approvalRequests, WRAPPED_SAVER } from "./run-salvage";
import { checkpointKey, configurableOf, orderedSaverMethods, threadKey } from "./thread-order";
import { STORED_SURFACE_OPTIONS } from "./surface-options";
import { option, readOptions } from "../options";
import { assertMethods, boundary } from "../errors";
import type { Dict } from "../values";

export interface CheckpointerRepairOptions extends StoredRepairOptions, RepairReporting {
  /** State key holding the messages. Default `"messages"`. */
  messagesKey?: string;
}

/** A run whose in-memory list differs from what was stored: what to re-apply to each of its next puts. */
interface RepairedRun {
  /** Id of the checkpoint last stored for this run; its next put names it as parent. */
  lastId: string;
  /** Calls the run's new input abandoned. */
  abandoned: Set<string>;
  /** Real results put back from discarded pending writes. */
  salvage: Map<string, ToolMessage>;
  /** Repairs already reported for this run (action and call id). */
  reported: Set<string>;
}

function repairingSaver(
  inner: BaseCheckpointSaver,
  options: CheckpointerRepairOptions,
): Pick<BaseCheckpointSaver, "getTuple" | "get" | "put" | "deleteThread"> {
  const { messagesKey: key = "messages", onRepair: _r, onError: _e, ...repairOptions } = options;
  const stored = createStoredRepairer(repairOptions);
  const runs = new Map<string, RepairedRun>();
  const reportedReads = new Set<string>();
  /** Checkpoints whose read put an input left in `__start__` into the list (thread and checkpoint id). */
  const inputsApplied = new Set<string>();
  /** Placeholders (thread and call) already looked up in a parent's pending writes. */
  const checkedPlaceholders = new Set<string>();
  /**
   * Real results put back, by thread id (all namespaces) and call: a parent graph stores a subgraph's returned list,
   * placeholders included, in its own namespace, where the pending writes hold nothing of them.
   */
  const salvaged = new Map<string, ToolMessage>();
  const messagesOf = (checkpoint: Checkpoint) => {
    const value = checkpoint.channel_values[key];
    return Array.isArray(value) ? (value as BaseMessage[]) : undefined;
  };
  const withMessages = (checkpoint: Checkpoint, messages: BaseMessage[]) => ({
    ...checkpoint,
    channel_values: { ...checkpoint.channel_values, [key]: messages },
  });

  /**
   * The tuple with its messages repaired. First, a checkpoint whose `__start__` still holds an input was stored by a
   * run aborted before its first step: a new input continuing from it would drop that input (LangGraph discards the
   * pending `__start__` task), so its messages go into the list now, and into `__start__` with the same ids (a
   * resume applies them again: the messages reducer replaces a message of the same id in place).
   */
  async function repairRead(tuple: CheckpointTuple, config: RunnableConfig): Promise<CheckpointTuple> {
    let { checkpoint } = tuple;
    let messages = messagesOf(checkpoint);
    // Its messages, in any shape the messages reducer takes; what is not a message is the reducer's business.
    const start = checkpoint.channel_values.__start__ as Dict | undefined;
    const input = [start?.[key]].flat().flatMap((item, i) => {
      try {
        return [readMessage(item, i)];
      } catch {
        return [];
      }
    });
    // A new thread's first checkpoint holds no list yet.
    if (input.length > 0 && (messages || checkpoint.channel_values[key] === undefined)) {
      const ids = withUniqueIds(input);
      const known = new Set(messages?.map((m) => m.id));
      messages = [...(messages ?? []), ...ids.filter((m) => !known.has(m.id))];
      checkpoint = withMessages(checkpoint, messages);
      checkpoint.channel_values.__start__ = { ...start, [key]: ids };
      evictOldest(inputsApplied);
      inputsApplied.add(checkpointKey(tuple.config));
    }
    const repaired = messages && stored.repair(messages);
    if (!repaired?.repairs.length) return checkpoint === tuple.checkpoint ? tuple : { ...tuple, checkpoint };
    // Reading is not writing: until a run stores the repaired list, each read repairs again; report it once.
    if (firstTime(reportedReads, checkpointKey(tuple.config))) await reportRepairs(repaired.repairs, options, config);
    return { ...tuple, checkpoint: withMessages(checkpoint, repaired.messages) };
  }

  const getTuple = async (config: RunnableConfig) => {
    const tuple = await inner.getTuple(config);
    // A thread the engine cannot read is handed over as stored (reported through onError): never fail a read.
    return tuple && orFallback(() => repairRead(tuple, config), tuple, options, config);
  };

  /**
   * Real results for `open` calls in the pending writes of the checkpoint this put continues from, else salvaged
   * in another namespace of the thread. Given the `messages` that make the calls, a call a person was asked to
   * approve there gets a placeholder saying so.
   */
  async function pendingResults(config: RunnableConfig, open: Set<string>, messages?: readonly BaseMessage[]) {
    const { thread_id, checkpoint_ns, checkpoint_id } = configurableOf(config);
    const parent =
      open.size > 0 && typeof checkpoint_id === "string"
        ? await inner.getTuple({ configurable: { thread_id, checkpoint_ns: checkpoint_ns ?? "", checkpoint_id } })
        : undefined;
    const found = resultsInWrites(parent?.pendingWrites, key, open);
    if (messages) addCancelled(messages, open, found, approvalRequests(parent), stored.options.syntheticResultText);
    for (const id of open) {
      const result = found.has(id) ? undefined : salvaged.get(`${String(thread_id)}\u0000${id}`);
      if (result) found.set(id, result);
    }
    return found;
  }

  /** The checkpoint as it should be stored: the same object when nothing needs repairing. */
  async function repairedCheckpoint(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata) {
    const messages = messagesOf(checkpoint);
    if (!messages) return checkpoint;
    const thread = threadKey(config);
    const parentId = configurableOf(config).checkpoint_id;
    const last = runs.get(thread);
    const run = last?.lastId === parentId ? last : undefined;
    // A new input (not a resume, not a `Command({ update })`, which keeps the pending step): LangGraph drops the
    // pending step.
    const abandoning =
      typeof parentId === "string" &&
      metadata?.source === "input" &&
      Object.hasOwn(checkpoint.channel_values, "__start__");
    const abandoned = new Set(run?.abandoned);
    const salvage = new Map(run?.salvage);
    if (abandoning) {
      const open = unansweredCallIds(messages);
      for (const id of open) abandoned.add(id);
      for (const [id, result] of await pendingResults(config, open, messages))
        if (!salvage.has(id)) salvage.set(id, result);
    }
    let repaired = stored.repair(messages, { closeOpen: abandoning, abandoned, salvage });
    if (!run && !abandoning) {
      // Real results may still sit in the parent's pending writes: for calls closed outside a new input (e.g.
      // `durability: "exit"` stores only the run's last checkpoint), and for our marked placeholders (a surface
      // closed the calls itself), each placeholder looked up once per process.
      const ids = repaired.repairs.some((r) => r.action === "synthesized_result" || r.action === "removed_call")
        ? unansweredCallIds(messages)
        : new Set<string>();
      if (typeof parentId === "string")
        for (const m of messages) {
          const id = isToolResult(m) && isMarkedSyntheticResult(m) ? resultIdOf(m) : undefined;
          if (id !== undefined && firstTime(checkedPlaceholders, `${thread}\u0000${id}`)) ids.add(id);
        }
      const found = await pendingResults(config, ids);
      if (found.size > 0) {
        for (const [id, result] of found) salvage.set(id, result);
        repaired = stored.repair(messages, { abandoned, salvage });
      }
    }
    // Real results put back (placeholders saying the user cancelled are no result), for other namespaces of the thread.
    for (const id of repaired.salvaged) {
      const result = salvage.get(id);
      if (!result || isMarkedSyntheticResult(result)) continue;
      evictOldest(salvaged, 10_000);
      salvaged.set(`${String(configurableOf(config).thread_id)}\u0000${id}`, result);
    }
    runs.delete(thread);
    if (repaired.repairs.length === 0) return checkpoint;
    const reported = run?.reported ?? new Set<string>();
    const keys = repaired.repairs.map((r) => `${r.action}\u0000${r.toolCallId ?? ""}`);
    const fresh = repaired.repairs.filter((_, i) => !reported.has(keys[i]));
    for (const k of keys) reported.add(k);
    evictOldest(runs);
    runs.set(thread, { lastId: checkpoint.id, abandoned, salvage, reported });
    await reportRepairs(fresh, options, config);
    return repaired.messages === messages ? checkpoint : withMessages(checkpoint, repaired.messages);
  }

  return {
    getTuple,
    get: async (config) => (await getTuple(config))?.checkpoint,
    // An id may be used again after its thread is deleted: nothing remembered of the old thread may reach the new one.
    deleteThread: (threadId) => {
      const prefix = `${threadId}\u0000`;
      for (const memory of [runs, salvaged, reportedReads, checkedPlaceholders, inputsApplied])
        for (const k of memory.keys()) if (k.startsWith(prefix)) memory.delete(k);
      return inner.deleteThread(threadId);
    },
    // A checkpoint the engine cannot read is stored as it came (reported through onError): never fail a write.
    put: async (config, checkpoint, metadata, versions) => {
      let c = await orFallback(() => repairedCheckpoint(config, checkpoint, metadata), checkpoint, options, config);
      // A list that differs from the one stored at its version (repaired here, or an input a read put in) gets a new
      // version: a saver that stores a channel per version (PostgresSaver) would keep the old list otherwise.
      // (Integer versions only: a saver counting in strings would give the run's next version the same one.)
      const current = c.channel_versions[key];
      if (
        !(key in versions) &&
        typeof current !== "string" &&
        (c !== checkpoint || inputsApplied.has(checkpointKey(config))) &&
        messagesOf(c)
      ) {
        const version = nextBranchVersion(inner, current);
        c = { ...c, channel_versions: { ...c.channel_versions, [key]: version } };
        versions = { ...versions, [key]: version };
      }
      return inner.put(config, c, metadata, versions);
    },
  };
}

export const CHECKPOINTER_OPTIONS = { ...STORED_SURFACE_OPTIONS, messagesKey: option.name };

/**
 * Wraps a checkpointer so that stored threads stay valid for the provider. Every method of `checkpointer`
 * is delegated (the result is the same object type, and `instanceof` still holds); `getTuple`, `get` and `put`
 * repair the messages at `options.messagesKey` (`list()`, the state history, yields what is stored). Never mutates what the inner
 * saver returns or receives; a clean thread costs one walk over its messages and no copy.
 */
export const withToolCallRepair = boundary(
  "withToolCallRepair",
  <T extends BaseCheckpointSaver>(checkpointer: T, options: CheckpointerRepairOptions = {}): T => {
    const given = readOptions<CheckpointerRepairOptions>(options, "withToolCallRepair", CHECKPOINTER_OPTIONS);
    assertMethods(
      checkpointer,
      "withToolCallRepair",
      "checkpointer",
      "a checkpoint saver (BaseCheckpointSaver)",
      SAVER_METHODS,
    );
    const wrapper = repairingSaver(checkpointer, given);
    const overrides: Record<PropertyKey, unknown> = {
      ...wrapper,
      // A thread's reads and writes in order: no write of an aborted run buries a newer turn (thread-order.ts).
      ...orderedSaverMethods(checkpointer, wrapper),
      // Versions two branches of one thread never share (PostgresSaver keeps one blob per version).
      getNextVersion: (current: ChannelVersions[string] | undefined) => nextBranchVersion(checkpointer, current),
      // For a node's own read of pending writes (run-salvage.ts): the saver itself, without the wrapper's bookkeeping.
      [WRAPPED_SAVER]: checkpointer,
    };
    return new Proxy(checkpointer, {
      get(target, property) {
        if (Object.hasOwn(overrides, property)) return overrides[property];
        const value = Reflect.get(target, property, target);
        // Bound to the inner saver: its own methods (and private fields) see the saver itself.
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  },
);
