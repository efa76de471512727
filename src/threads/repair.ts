/**
 * `repairThreads(saver, options)`: every broken thread repaired structurally (repairStoredMessages), with the real
 * results LangGraph discarded put back from pending writes. A dry run by default; with `apply: true` each fix
 * is a new checkpoint on top of the thread (see write.ts), never an edit of an existing one.
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { ERROR, type BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { boundary } from "../errors";
import { trailingOpenExchange, unansweredCallIds } from "../messages/exchanges";
import type { Provider, ToolCallProblem, ToolCallRepair } from "../types";
import { repairStoredMessages, storedProblems, type ThreadStatus } from "./repair-thread";
import { discardedResults } from "./salvage";
import {
  failureText,
  readThread,
  readThreads,
  REPAIR_OPTIONS,
  resolveScanOptions,
  type ResolvedScanOptions,
  type ProviderSource,
  type ThreadScanOptions,
} from "./scan";
import type { ThreadItem, ThreadKey } from "./source";
import { repairMarker, writeOnTop } from "./write";

/**
 * - `repaired`: the fix was written (`written` is its config).
 * - `would_repair`: dry run; `after` is what would be written.
 * - `unchanged`: nothing structural to fix (clean, open, reshape only, no messages).
 *
 * Whatever the status, `reshape` says what a request to the provider still needs once the thread is stored
 * as it is (or as repaired): request shaping that is never stored (e.g. Bedrock's alternating turns), done per
 * request by toolCallRepairMiddleware, toolCallRepairHook or withRequestRepair.
 * - `skipped`: a live run wrote to the thread while it was being repaired, or its latest checkpoint holds
 *   pending work (finished results, an interrupt, an input) that a checkpoint on top would drop.
 * - `unreadable`: the saver could not read the thread.
 * - `failed`: the thread could not be judged (`found: "unreadable"`), or its fix could not be made or written
 *   (see `reason`). One thread's failure never ends the run.
 */
export type ThreadRepairStatus = "repaired" | "would_repair" | "unchanged" | "skipped" | "unreadable" | "failed";

export interface ThreadRepairReport extends ThreadKey {
  status: ThreadRepairStatus;
  /** What the scan found in the checkpoint that was read. */
  found: ThreadStatus;
  /** Id of the checkpoint that was read (the parent of the fix). */
  checkpointId?: string;
  /** Whose rules the thread was judged against (see `scanThreads`). */
  provider?: Provider;
  providerFrom?: ProviderSource;
  problems: ToolCallProblem[];
  /** How many structural problems the checkpoint that was read has. */
  structural: number;
  repairs: ToolCallRepair[];
  /**
   * What a request to `provider` still needs beyond what is stored (after the fix, when there is one): problems
   * of request shaping only, which a plain agent of that provider is refused for. Empty when none.
   */
  reshape: ToolCallProblem[];
  /** Calls whose real result was put back from the pending writes of an earlier checkpoint. */
  salvaged: string[];
  /** The stored messages and the repaired ones, for threads that change. */
  before?: BaseMessage[];
  after?: BaseMessage[];
  /** Config of the checkpoint written. */
  written?: RunnableConfig;
  reason?: string;
}

export interface ThreadRepairOptions extends ThreadScanOptions {
  /** Write the fixes. Default false: a dry run that only reports them. */
  apply?: boolean;
  /** With `limit`: at most this many threads repaired (or, in a dry run, found to need it). */
  limit?: number;
}

/**
 * Repairs every broken thread of `saver` (or of `options.threads`), one report per thread read, in order.
 * Re-running is safe: repaired threads are no longer broken, so a run stopped by `signal` resumes where it was.
 */
export const repairThreads = boundary(
  "repairThreads",
  (saver: BaseCheckpointSaver, options: ThreadRepairOptions = {}): AsyncGenerator<ThreadRepairReport> => {
    // Checked at the call, before the first step: a bad saver or option throws here, naming it.
    const o = resolveScanOptions(saver, options, "repairThreads", REPAIR_OPTIONS);
    let claimed = 0;
    const full = () => claimed === o.limit;
    return readThreads(saver, o, (item) => repairOne(saver, o, item, full, () => claimed++), full);
  },
);

/** One thread's report; undefined: none. Everything is this thread's: a throw is its `failed` report. */
async function repairOne(
  saver: BaseCheckpointSaver,
  o: ResolvedScanOptions,
  item: ThreadItem,
  full: () => boolean,
  claim: () => void,
) {
  // Until it is judged, a thread that throws is one the engine could not read (as scanThreads reports it).
  let base: Partial<ThreadRepairReport> = { found: "unreadable", problems: [], structural: 0 };
  const report = (fields: Partial<ThreadRepairReport>) =>
    ({ ...item.key, ...base, repairs: [], reshape: [], salvaged: [], ...fields }) as ThreadRepairReport;
  try {
    const read = await readThread(saver, item, o);
    if (!read) return;
    const [{ status, checkpointId, provider, providerFrom, problems, structural, error }, tuple] = read;
    base = { found: status, checkpointId, provider, providerFrom, problems, structural };
    if (status === "unreadable") return report({ status, reason: error });
    if (status !== "broken") return report({ status: "unchanged", reshape: status === "reshape" ? problems : [] });
    if (full()) return; // read while the last allowed repair was under way: left for the next run
    // Pending writes other than a failed task's error (finished tool results a resume reuses, an interrupt
    // waiting for its answer, an input not yet applied) belong to that checkpoint's tasks: a checkpoint on top
    // would drop them.
    const pending = [...new Set(tuple!.pendingWrites?.map(([, channel]) => channel).filter((c) => c !== ERROR))];
    if (pending.length)
      return report({
        status: "skipped",
        reason: `its latest checkpoint has pending writes (${pending.slice(0, 4).join(", ")}): resume or answer the thread first`,
      });
    claim();
    const before = tuple!.checkpoint.channel_values[o.messagesKey] as BaseMessage[];
    // The calls to salvage: those without a result, but for an exchange a resume may still run.
    const wanted = unansweredCallIds(before);
    for (const id of trailingOpenExchange(before)?.unanswered ?? []) wanted.delete(id);
    const repaired = repairStoredMessages(before, {
      salvage: await discardedResults(saver, tuple!, o.messagesKey, wanted),
    });
    const { repairs, salvaged, messages: after } = repaired;
    const fixed = { repairs, reshape: storedProblems(after, provider, "request"), salvaged, before, after };
    const left = [...new Set(storedProblems(after, provider).map((p) => p.kind))].join(", ");
    if (!repairs.length || left)
      return report({
        ...fixed,
        status: "failed",
        reason: `the repair leaves structural problems: ${left || "none repaired"}`,
      });
    if (!o.apply) return report({ ...fixed, status: "would_repair" });
    const marker = repairMarker(checkpointId!, repaired);
    const written = await writeOnTop(saver, item.key, tuple!, o.messagesKey, after, marker);
    return report({
      ...fixed,
      ...(typeof written === "string" ? { status: "skipped", reason: written } : { status: "repaired", written }),
    });
  } catch (error) {
    return report({ status: "failed", reason: failureText(error) });
  }
}
