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
 *   dropped by LangGraph when a new input comes: the wrapper notes such input when the run loads the
 *   checkpoint (`getTuple`) and puts it back, before the new input, in each put of that run.
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
import { isMarkedSyntheticResult, isNoResult, isToolResult, resultIdOf } from "../messages/inspect";
import { evictOldest, firstTime, orFallback, reportRepairs, type RepairReporting } from "./events";
import { createStoredRepairer, SAVER_METHODS, type StoredRepairOptions } from "../threads/repair-thread";
import { discardedResults, resultsInWrites } from "../threads/salvage";
import { withUniqueIds } from "./state-update";
import { nextBranchVersion } from "./checkpoint-versions";
import { addKnownPlaceholders, approvalRequests, WRAPPED_SAVER } from "./run-salvage";
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
  /** User input the run's new input dropped from `__start__`, and where it goes back. */
  restore?: RestoredInput;
}

/** Messages of an input that was stored but never applied, and the id of the message they follow (none: first). */
type RestoredInput = { messages: BaseMessage[]; afterId: string | undefined };

/**
 * The restored input put back into `messages` right after the message it followed, unless already there. The
 * same array when nothing changes.
 */
function withRestoredInput(messages: BaseMessage[], { messages: input, afterId }: RestoredInput) {
  const ids = new Set(input.map((m) => m.id));
  const at = afterId === undefined ? 0 : messages.findIndex((m) => m.id === afterId) + 1;
  // Already there, or the message it followed is gone (no safe place).
  if (messages.some((m) => ids.has(m.id)) || (at === 0 && afterId !== undefined)) return messages;
  return [...messages.slice(0, at), ...input, ...messages.slice(at)];
}

function repairingSaver(
  inner: BaseCheckpointSaver,
  options: CheckpointerRepairOptions,
): Pick<BaseCheckpointSaver, "getTuple" | "get" | "put" | "deleteThread"> {
  const { messagesKey: key = "messages", onRepair: _r, onError: _e, ...repairOptions } = options;
  const stored = createStoredRepairer(repairOptions);
  const runs = new Map<string, RepairedRun>();
  const reportedReads = new Set<string>();
  /** Placeholders (thread and call) already looked up in a parent's pending writes. */
  const checkedPlaceholders = new Set<string>();
  /**
   * Real results put back, by thread id (all namespaces) and call: a parent graph stores a subgraph's returned list,
   * placeholders included, in its own namespace, where the pending writes hold nothing of them.
   */
  const salvaged = new Map<string, ToolMessage>();
  /** Checkpoints read with an input in `__start__` that was never applied (thread and checkpoint id): its messages. */
  const unappliedInputs = new Map<string, RestoredInput>();
  const messagesOf = (checkpoint: Checkpoint) => {
    const value = checkpoint.channel_values[key];
    return Array.isArray(value) ? (value as BaseMessage[]) : undefined;
  };
  const withMessages = (checkpoint: Checkpoint, messages: BaseMessage[]) => ({
    ...checkpoint,
    channel_values: { ...checkpoint.channel_values, [key]: messages },
  });

  /**
   * The tuple with its messages repaired; first, a checkpoint whose `__start__` still holds an input was stored by a
   * run aborted before its first step: if a new input continues from it, LangGraph drops that input, so its
   * messages are remembered to be put back.
   */
  async function repairRead(tuple: CheckpointTuple, config: RunnableConfig) {
    const messages = messagesOf(tuple.checkpoint);
    // Its messages, in any shape the messages reducer takes; what is not a message is the reducer's business.
    const input = [(tuple.checkpoint.channel_values.__start__ as Dict | undefined)?.[key]].flat().flatMap((item, i) => {
      try {
        return [readMessage(item, i)];
      } catch {
        return [];
      }
    });
    if (input.length) {
      evictOldest(unappliedInputs).set(checkpointKey(tuple.config), {
        messages: withUniqueIds(input),
        afterId: messages?.at(-1)?.id,
      });
    }
    const repaired = messages && stored.repair(messages);
    if (!repaired?.repairs.length) return tuple;
    // Reading is not writing: until a run stores the repaired list, each read repairs again; report it once.
    if (firstTime(reportedReads, checkpointKey(tuple.config)))
      await reportRepairs(repaired.repairs, options, { surface: "checkpointer", config });
    return { ...tuple, checkpoint: withMessages(tuple.checkpoint, repaired.messages) };
  }

  const getTuple = async (config: RunnableConfig) => {
    const tuple = await inner.getTuple(config);
    // A thread the engine cannot read is handed over as stored (reported through onError): never fail a read.
    return tuple && orFallback(tuple, options, config, () => repairRead(tuple, config));
  };

  /**
   * Real results for `open` calls in the pending writes of the checkpoint this put continues from, else salvaged
   * in another namespace of the thread. Given the `messages` that make the calls, a call a person was asked to
   * approve there, or whose sibling's result is there, gets a placeholder saying what is known.
   */
  async function pendingResults(config: RunnableConfig, open: Set<string>, messages?: readonly BaseMessage[]) {
    const { thread_id, checkpoint_ns, checkpoint_id } = configurableOf(config);
    const parent =
      open.size && typeof checkpoint_id === "string"
        ? await inner.getTuple({ configurable: { thread_id, checkpoint_ns: checkpoint_ns ?? "", checkpoint_id } })
        : undefined;
    // A new input's abandoned calls (`messages` given): walked back from there, since a thread that broke before the
    // wrapper was adopted holds them further up. A placeholder's: there only (one the recovery stored replaces a
    // result a gateway dropped, which is further up).
    const found = messages
      ? await discardedResults(inner, parent, key, open)
      : resultsInWrites(parent?.pendingWrites, key, open);
    for (const id of open) {
      const result = salvaged.get(`${String(thread_id)}\0${id}`);
      if (result && !found.has(id)) found.set(id, result);
    }
    if (messages)
      addKnownPlaceholders(messages, open, found, approvalRequests(parent), stored.options.syntheticResultText);
    return found;
  }

  /** The checkpoint as it should be stored: the same object when nothing needs repairing. */
  async function repairedCheckpoint(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata) {
    const messages = messagesOf(checkpoint);
    if (!messages) return checkpoint;
    const thread = threadKey(config);
    const { thread_id, checkpoint_id: parentId } = configurableOf(config);
    const last = runs.get(thread);
    const run = last?.lastId === parentId ? last : undefined;
    // A new input (not a resume, not a `Command({ update })`, which keeps the pending step): LangGraph drops the
    // pending step.
    const abandoning =
      typeof parentId === "string" &&
      metadata?.source === "input" &&
      Object.hasOwn(checkpoint.channel_values, "__start__");
    // A run's write that continues from a checkpoint whose input was never applied (with durability "exit" the
    // new input's own checkpoint is never written) may have dropped that input.
    const dropped =
      abandoning || (!run && metadata?.source === "loop") ? unappliedInputs.get(checkpointKey(config)) : undefined;
    const abandoned = new Set(run?.abandoned);
    const salvage = new Map(run?.salvage);
    const restore = run?.restore ?? dropped;
    if (abandoning) {
      const open = unansweredCallIds(messages);
      for (const id of open) abandoned.add(id);
      for (const [id, result] of await pendingResults(config, open, messages))
        if (!salvage.has(id)) salvage.set(id, result);
    }
    // Once the run's own list holds the input (a resume applied it), there is nothing left to put back.
    const restored = restore ? withRestoredInput(messages, restore) : messages;
    let repaired = stored.repair(restored, { closeOpen: abandoning, abandoned, salvage });
    if (!run && !abandoning) {
      // Real results may still sit in the parent's pending writes: for calls closed outside a new input (e.g.
      // `durability: "exit"` stores only the run's last checkpoint), and for our marked placeholders (a surface
      // closed the calls itself), each placeholder looked up once per process.
      const ids = repaired.repairs.some((r) => r.action === "synthesized_result" || r.action === "removed_call")
        ? unansweredCallIds(restored)
        : new Set<string>();
      if (typeof parentId === "string")
        for (const m of messages) {
          const id = isToolResult(m) && isNoResult(m) ? resultIdOf(m) : undefined;
          if (id !== undefined && firstTime(checkedPlaceholders, `${thread}\0${id}`)) ids.add(id);
        }
      const found = await pendingResults(config, ids);
      if (found.size) {
        for (const [id, result] of found) salvage.set(id, result);
        repaired = stored.repair(restored, { abandoned, salvage });
      }
    }
    // Real results put back (placeholders saying the user cancelled are no result), for other namespaces of the thread.
    for (const id of repaired.salvaged) {
      const result = salvage.get(id);
      if (!result || isMarkedSyntheticResult(result)) continue;
      evictOldest(salvaged, 10_000).set(`${String(thread_id)}\0${id}`, result);
    }
    runs.delete(thread);
    const restoring = restored !== messages ? restore : undefined;
    if (!repaired.repairs.length && !restoring) return checkpoint;
    const reported = run?.reported ?? new Set<string>();
    const keys = repaired.repairs.map((r) => `${r.action}\0${r.toolCallId ?? ""}`);
    const fresh = repaired.repairs.filter((_, i) => !reported.has(keys[i]));
    for (const k of keys) reported.add(k);
    evictOldest(runs).set(thread, { lastId: checkpoint.id, abandoned, salvage, reported, restore: restoring });
    await reportRepairs(fresh, options, { surface: "checkpointer", config });
    return repaired.messages === messages ? checkpoint : withMessages(checkpoint, repaired.messages);
  }

  return {
    getTuple,
    get: async (config) => (await getTuple(config))?.checkpoint,
    // An id may be used again after its thread is deleted: nothing remembered of the old thread may reach the new one.
    deleteThread: (threadId) => {
      for (const memory of [runs, salvaged, unappliedInputs, reportedReads, checkedPlaceholders])
        for (const k of memory.keys()) if (k.startsWith(`${threadId}\0`)) memory.delete(k);
      return inner.deleteThread(threadId);
    },
    // A checkpoint the engine cannot read is stored as it came (reported through onError): never fail a write.
    put: async (config, checkpoint, metadata, versions) => {
      let c = await orFallback(checkpoint, options, config, () => repairedCheckpoint(config, checkpoint, metadata));
      // A list changed here (repaired, an input put back) where the run did not change it gets a version of its own:
      // a saver that stores a channel per version (PostgresSaver) would keep the list stored at the old one.
      const current = c.channel_versions[key];
      if (c !== checkpoint && !(key in versions) && typeof current !== "string") {
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
      getNextVersion: (current?: ChannelVersions[string]) => nextBranchVersion(checkpointer, current),
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
