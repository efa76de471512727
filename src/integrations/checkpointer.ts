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
  CheckpointListOptions,
  CheckpointMetadata,
  CheckpointTuple,
} from "@langchain/langgraph-checkpoint";
import type { ToolCallRepair } from "../types";
import { coerceMessage } from "../messages/coerce";
import { unansweredCallIds } from "../messages/exchanges";
import { isDict, isMarkedSyntheticResult, isToolResult, resultIdOf } from "../messages/inspect";
import { orFallback, reportRepairs, type RepairReporting } from "./events";
import {
  createStoredRepairer,
  SAVER_METHODS,
  type StoredRepairer,
  type StoredRepairOptions,
} from "../threads/repair-thread";
import { resultsInWrites } from "../threads/salvage";
import { withUniqueIds } from "./state-update";
import { nextBranchVersion } from "./checkpoint-versions";
import { approvalPlaceholders, WRAPPED_SAVER } from "./run-salvage";
import { configurableOf, orderedSaverMethods } from "./thread-order";
import { STORED_SURFACE_OPTIONS } from "./surface-options";
import { option, readOptions } from "../options";
import { assertMethods, boundary } from "../errors";

export interface CheckpointerRepairOptions extends StoredRepairOptions, RepairReporting {
  /** State key holding the messages. Default `"messages"`. */
  messagesKey?: string;
  /** Also repair the tuples `list()` yields (state history). Default false. */
  list?: boolean;
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

/** Messages of an input that was stored but never applied, and the message they follow in the thread. */
interface RestoredInput {
  messages: BaseMessage[];
  /** Id of the last message the thread held before them (undefined: they go first). */
  afterId: string | undefined;
}

const MAX_TRACKED = 1000;
const START_CHANNEL = "__start__";

function threadKey(config: RunnableConfig | undefined): string {
  const { thread_id, checkpoint_ns } = configurableOf(config);
  return `${String(thread_id)}\u0000${typeof checkpoint_ns === "string" ? checkpoint_ns : ""}`;
}

/** A checkpoint of a thread: the thread key and the checkpoint id the config names. */
const checkpointKey = (config: RunnableConfig | undefined) =>
  `${threadKey(config)}\u0000${String(configurableOf(config).checkpoint_id)}`;

const repairKey = (repair: ToolCallRepair) => `${repair.action}\u0000${repair.toolCallId ?? ""}`;

/** Keeps a map or set from growing without bound: the oldest entry goes first. */
function evictOldest(collection: Map<string, unknown> | Set<string>): void {
  if (collection.size < MAX_TRACKED) return;
  const oldest = collection.keys().next().value;
  if (oldest !== undefined) collection.delete(oldest);
}

/** The messages of `value` (one message or a list, in any shape the messages reducer takes); others are skipped. */
function messagesIn(value: unknown): BaseMessage[] {
  return [value ?? []].flat().flatMap((item, index) => {
    try {
      return [coerceMessage(item, index)];
    } catch {
      return []; // Not a message: the reducer's business, not ours.
    }
  });
}

/**
 * `restore.messages` put back into `messages` right after the message they followed, unless already there. The
 * same array when nothing changes.
 */
function withRestoredInput(messages: BaseMessage[], restore: RestoredInput): BaseMessage[] {
  const ids = new Set(restore.messages.map((m) => m.id));
  if (messages.some((m) => m.id !== undefined && ids.has(m.id))) return messages;
  const at = restore.afterId === undefined ? 0 : messages.findIndex((m) => m.id === restore.afterId) + 1;
  if (at === 0 && restore.afterId !== undefined) return messages; // the message they followed is gone: no safe place
  return [...messages.slice(0, at), ...restore.messages, ...messages.slice(at)];
}

/** A new input (not a resume, not a `Command({ update })`, which keeps the pending step): LangGraph drops the pending step. */
function isNewInput(checkpoint: Checkpoint, metadata: CheckpointMetadata | undefined): boolean {
  return metadata?.source === "input" && Object.hasOwn(checkpoint.channel_values ?? {}, START_CHANNEL);
}

class RepairingSaver {
  private readonly messagesKey: string;
  private readonly runs = new Map<string, RepairedRun>();
  private readonly reportedReads = new Set<string>();
  /** Placeholders (thread and call) already looked up in a parent's pending writes. */
  private readonly checkedPlaceholders = new Set<string>();
  /**
   * Real results put back, by thread id (all namespaces): a parent graph stores a subgraph's returned list,
   * placeholders included, in its own namespace, where the pending writes hold nothing of them.
   */
  private readonly salvagedByThread = new Map<string, Map<string, ToolMessage>>();
  /** Checkpoints read with an input in `__start__` that was never applied (thread and checkpoint id): its messages. */
  private readonly unappliedInputs = new Map<string, RestoredInput>();
  private readonly stored: StoredRepairer;

  constructor(
    private readonly inner: BaseCheckpointSaver,
    readonly options: CheckpointerRepairOptions,
  ) {
    const { messagesKey, list: _list, onRepair: _onRepair, onError: _onError, ...repairOptions } = options;
    this.messagesKey = messagesKey ?? "messages";
    this.stored = createStoredRepairer(repairOptions);
  }

  private messagesOf(checkpoint: Checkpoint | undefined): BaseMessage[] | undefined {
    const value = (checkpoint?.channel_values as Record<string, unknown> | undefined)?.[this.messagesKey];
    return Array.isArray(value) ? (value as BaseMessage[]) : undefined;
  }

  private withMessages(checkpoint: Checkpoint, messages: BaseMessage[]): Checkpoint {
    return { ...checkpoint, channel_values: { ...checkpoint.channel_values, [this.messagesKey]: messages } };
  }

  readonly getTuple = async (config: RunnableConfig): Promise<CheckpointTuple | undefined> => {
    const tuple = await this.inner.getTuple(config);
    if (!tuple) return tuple;
    // A thread the engine cannot read is handed over as stored (reported through onError): never fail a read.
    return orFallback(
      () => {
        this.noteUnappliedInput(tuple);
        return this.repairRead(tuple, config);
      },
      tuple,
      this.options,
      config,
    );
  };

  /**
   * A checkpoint whose `__start__` still holds an input was stored by a run aborted before its first step. If
   * a new input continues from it, LangGraph drops that input: remember its messages to put them back.
   */
  private noteUnappliedInput(tuple: CheckpointTuple): void {
    const start = (tuple.checkpoint.channel_values as Record<string, unknown> | undefined)?.[START_CHANNEL];
    if (!isDict(start)) return;
    const messages = messagesIn(start[this.messagesKey]);
    if (messages.length === 0) return;
    evictOldest(this.unappliedInputs);
    const afterId = this.messagesOf(tuple.checkpoint)?.at(-1)?.id;
    this.unappliedInputs.set(checkpointKey(tuple.config), { messages: withUniqueIds(messages), afterId });
  }

  readonly get = async (config: RunnableConfig): Promise<Checkpoint | undefined> =>
    (await this.getTuple(config))?.checkpoint;

  readonly list = (config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> => {
    const tuples = this.inner.list(config, options);
    if (!this.options.list) return tuples;
    return (async function* (wrapper: RepairingSaver) {
      for await (const tuple of tuples)
        yield await orFallback(() => wrapper.repairRead(tuple, config), tuple, wrapper.options, config);
    })(this);
  };

  readonly put = async (
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> => {
    // A checkpoint the engine cannot read is stored as it came (reported through onError): never fail a write.
    const repaired = await orFallback(
      () => this.repairedCheckpoint(config, checkpoint, metadata),
      checkpoint,
      this.options,
      config,
    );
    return this.inner.put(config, repaired, metadata, newVersions);
  };

  /** The checkpoint as it should be stored: the same object when nothing needs repairing. */
  private async repairedCheckpoint(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
  ): Promise<Checkpoint> {
    const messages = this.messagesOf(checkpoint);
    if (!messages) return checkpoint;
    const key = threadKey(config);
    const parentId = configurableOf(config).checkpoint_id;
    let run = this.runs.size > 0 ? this.runs.get(key) : undefined;
    if (run && run.lastId !== parentId) {
      this.runs.delete(key);
      run = undefined;
    }
    const abandoning = typeof parentId === "string" && isNewInput(checkpoint, metadata);
    // A run's write that continues from a checkpoint whose input was never applied (with durability "exit" the
    // new input's own checkpoint is never written) may have dropped that input.
    const dropped =
      this.unappliedInputs.size > 0 && (abandoning || (!run && metadata?.source === "loop"))
        ? this.unappliedInputs.get(checkpointKey(config))
        : undefined;
    if (!run && !abandoning && !dropped && this.stored.isClean(messages)) {
      const placeholders = typeof parentId === "string" ? this.uncheckedPlaceholders(key, messages) : undefined;
      return placeholders ? this.withRealResults(config, checkpoint, messages, placeholders) : checkpoint;
    }

    const repaired = await this.repairWrite(messages, config, run, abandoning, dropped);
    if (repaired.repairs.length === 0 && !repaired.restore) {
      this.runs.delete(key);
      return checkpoint;
    }
    const reported = run?.reported ?? new Set<string>();
    const fresh = repaired.repairs.filter((repair) => !reported.has(repairKey(repair)));
    for (const repair of fresh) reported.add(repairKey(repair));
    this.runs.delete(key);
    evictOldest(this.runs);
    this.runs.set(key, {
      lastId: checkpoint.id,
      abandoned: repaired.abandoned,
      salvage: repaired.salvage,
      reported,
      restore: repaired.restore,
    });
    await reportRepairs(fresh, this.options, config);
    return repaired.messages === messages ? checkpoint : this.withMessages(checkpoint, repaired.messages);
  }

  readonly deleteThread = async (threadId: string): Promise<void> => {
    for (const key of [...this.runs.keys()]) if (key.startsWith(`${threadId}\u0000`)) this.runs.delete(key);
    return this.inner.deleteThread(threadId);
  };

  /** Ids of our placeholders in `messages` not yet looked up for this thread (marked as looked up now), or undefined. */
  private uncheckedPlaceholders(key: string, messages: readonly BaseMessage[]): Set<string> | undefined {
    let ids: Set<string> | undefined;
    for (const m of messages) {
      if (!isToolResult(m) || !isMarkedSyntheticResult(m)) continue;
      const id = resultIdOf(m);
      const checked = `${key}\u0000${id}`;
      if (id === undefined || this.checkedPlaceholders.has(checked)) continue;
      evictOldest(this.checkedPlaceholders);
      this.checkedPlaceholders.add(checked);
      (ids ??= new Set()).add(id);
    }
    return ids;
  }

  /** A clean write holding placeholders: real results for them from the parent's pending writes, if any. */
  private async withRealResults(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    messages: BaseMessage[],
    placeholders: Set<string>,
  ): Promise<Checkpoint> {
    const found = await this.pendingResults(config, placeholders);
    if (found.size === 0) return checkpoint;
    const repaired = this.stored.repair(messages, { salvage: found });
    this.rememberSalvaged(config, repaired.salvaged, found);
    await reportRepairs(repaired.repairs, this.options, config);
    return this.withMessages(checkpoint, repaired.messages);
  }

  /** Real results put back (placeholders saying the user cancelled are no result), for other namespaces of the thread. */
  private rememberSalvaged(config: RunnableConfig, ids: readonly string[], results: ReadonlyMap<string, ToolMessage>) {
    const thread = String(configurableOf(config).thread_id);
    for (const id of ids) {
      const result = results.get(id);
      if (!result || isMarkedSyntheticResult(result)) continue;
      let known = this.salvagedByThread.get(thread);
      if (!known) {
        evictOldest(this.salvagedByThread);
        this.salvagedByThread.set(thread, (known = new Map()));
      }
      evictOldest(known);
      known.set(id, result);
    }
  }

  private async repairRead(tuple: CheckpointTuple, config: RunnableConfig): Promise<CheckpointTuple> {
    const messages = this.messagesOf(tuple.checkpoint);
    if (!messages) return tuple;
    const repaired = this.stored.repair(messages);
    if (repaired.repairs.length === 0) return tuple;
    // Reading is not writing: until a run stores the repaired list, each read repairs again; report it once.
    const readKey = checkpointKey(tuple.config);
    if (!this.reportedReads.has(readKey)) {
      evictOldest(this.reportedReads);
      this.reportedReads.add(readKey);
      await reportRepairs(repaired.repairs, this.options, config);
    }
    return { ...tuple, checkpoint: this.withMessages(tuple.checkpoint, repaired.messages) };
  }

  /**
   * Real results for `open` calls in the pending writes of the checkpoint this put continues from, else salvaged
   * in another namespace of the thread. Given the `messages` that make the calls, a call a person was asked to
   * approve there gets a placeholder saying so.
   */
  private async pendingResults(
    config: RunnableConfig,
    open: Set<string>,
    messages?: readonly BaseMessage[],
  ): Promise<Map<string, ToolMessage>> {
    const { thread_id, checkpoint_ns, checkpoint_id } = configurableOf(config);
    const parent =
      open.size > 0 && typeof checkpoint_id === "string"
        ? await this.inner.getTuple({ configurable: { thread_id, checkpoint_ns: checkpoint_ns ?? "", checkpoint_id } })
        : undefined;
    const found = resultsInWrites(parent?.pendingWrites, this.messagesKey, open);
    if (messages && parent?.pendingWrites?.length) {
      const left = new Set([...open].filter((id) => !found.has(id)));
      const cancelled = approvalPlaceholders(messages, left, parent, this.stored.options.syntheticResultText);
      for (const [id, placeholder] of cancelled) found.set(id, placeholder);
    }
    for (const [id, result] of this.salvagedByThread.get(String(thread_id)) ?? [])
      if (open.has(id) && !found.has(id)) found.set(id, result);
    return found;
  }

  private async repairWrite(
    stale: BaseMessage[],
    config: RunnableConfig,
    run: RepairedRun | undefined,
    abandoning: boolean,
    dropped: RestoredInput | undefined,
  ) {
    const abandoned = new Set(run?.abandoned);
    const salvage = new Map(run?.salvage);
    const restore = run?.restore ?? dropped;
    if (abandoning) {
      const open = unansweredCallIds(stale);
      for (const id of open) abandoned.add(id);
      const found = await this.pendingResults(config, open, stale);
      for (const [id, result] of found) if (!salvage.has(id)) salvage.set(id, result);
    }
    // Once the run's own list holds the input (a resume applied it), there is nothing left to put back.
    const messages = restore ? withRestoredInput(stale, restore) : stale;
    const restoring = messages !== stale ? restore : undefined;
    let repaired = this.stored.repair(messages, { closeOpen: abandoning, abandoned, salvage });
    const closesCalls = repaired.repairs.some((r) => r.action === "synthesized_result" || r.action === "removed_call");
    if (!run && !abandoning && closesCalls) {
      // Calls closed outside a new input (e.g. `durability: "exit"` stores only the run's last checkpoint):
      // their finished results may still sit in the parent's pending writes.
      const open = unansweredCallIds(messages);
      const found = await this.pendingResults(config, open);
      if (found.size > 0) {
        for (const [id, result] of found) salvage.set(id, result);
        repaired = this.stored.repair(messages, { abandoned, salvage });
      }
    }
    this.rememberSalvaged(config, repaired.salvaged, salvage);
    return { ...repaired, abandoned, salvage, restore: restoring };
  }
}

const CHECKPOINTER_OPTIONS = { ...STORED_SURFACE_OPTIONS, list: option.flag, messagesKey: option.name };

/**
 * Wraps a checkpointer so that stored threads stay valid for the provider. Every method of `checkpointer`
 * is delegated (the result is the same object type, and `instanceof` still holds); `getTuple`, `get`, `put`
 * (and `list`, with `options.list`) repair the messages at `options.messagesKey`. Never mutates what the inner
 * saver returns or receives; a clean thread costs one walk over its messages and no copy.
 */
export const withToolCallRepair = boundary("withToolCallRepair", function withToolCallRepair<
  T extends BaseCheckpointSaver,
>(checkpointer: T, options: CheckpointerRepairOptions = {}): T {
  const given = readOptions<CheckpointerRepairOptions>(options, "withToolCallRepair", CHECKPOINTER_OPTIONS);
  assertMethods(
    checkpointer,
    "withToolCallRepair",
    "checkpointer",
    "a checkpoint saver (BaseCheckpointSaver)",
    SAVER_METHODS,
  );
  const wrapper = new RepairingSaver(checkpointer, given);
  const overrides: Record<PropertyKey, unknown> = {
    list: wrapper.list,
    deleteThread: wrapper.deleteThread,
    // A thread's reads and writes in order: no write of an aborted run buries a newer turn (thread-order.ts).
    ...orderedSaverMethods(checkpointer, wrapper),
    // Versions two branches of one thread never share (PostgresSaver keeps one blob per version).
    getNextVersion: (current: ChannelVersions[string] | undefined) => nextBranchVersion(checkpointer, current),
  };
  const bound = new Map<PropertyKey, [original: unknown, bound: unknown]>();
  return new Proxy(checkpointer, {
    get(target, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property];
      // For a node's own read of pending writes (run-salvage.ts): the saver itself, without the wrapper's bookkeeping.
      if (property === WRAPPED_SAVER) return target;
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      // Bound to the inner saver: its own methods (and private fields) see the saver itself.
      let fn = bound.get(property);
      if (fn?.[0] !== value) bound.set(property, (fn = [value, value.bind(target)]));
      return fn[1];
    },
  });
});
