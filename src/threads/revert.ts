/**
 * Undoing `repair --apply`: the manifest it wrote lists each changed thread with its head before and after
 * (`ManifestLine`); a revert makes each thread's head hold what its previous head held again, as a NEW checkpoint on
 * top (history kept, nothing deleted), written the way a repair is (write.ts `writeOnTop`). A thread that moved on
 * since the repair (its head is no longer the repair's checkpoint) is skipped: a revert would drop what was written
 * after it.
 */
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { checkpointIdOf, failureText } from "./scan";
import { configOf } from "./source";
import { writeOnTop } from "./write";

/** One line of a manifest (JSON): a thread `repair --apply` changed, its head before (`previous...`) and after. */
export interface ManifestLine {
  thread: string;
  namespace: string;
  previousCheckpointId: string;
  checkpointId: string;
}

/** `revertedTo`: the new head (reverted); `reason`: why not (skipped, failed). */
export type RevertReport = ManifestLine & {
  status: "reverted" | "skipped" | "failed";
  revertedTo?: string;
  reason?: string;
};

/** Each line reverted in turn, one report each; stops between threads once `signal` aborts. */
export async function* revertThreads(
  saver: BaseCheckpointSaver,
  messagesKey: string,
  lines: readonly ManifestLine[],
  signal?: AbortSignal,
): AsyncGenerator<RevertReport> {
  for (const line of lines) {
    if (signal?.aborted) return;
    const key = { threadId: line.thread, namespace: line.namespace };
    try {
      const head = await saver.getTuple(configOf(key));
      const headId = checkpointIdOf(head);
      // The previous checkpoint is read only for a thread still at the repair's head.
      const messages =
        headId === line.checkpointId &&
        (await saver.getTuple(configOf(key, line.previousCheckpointId)))?.checkpoint.channel_values[messagesKey];
      const done =
        headId !== line.checkpointId
          ? `it moved on since the repair: its head is ${headId ?? "gone"}, not ${line.checkpointId}`
          : !Array.isArray(messages)
            ? `checkpoint ${line.previousCheckpointId} holds no "${messagesKey}"`
            : await writeOnTop(saver, key, head!, messagesKey, messages, {
                reverted: line.checkpointId,
                restores: line.previousCheckpointId,
              });
      yield typeof done === "string"
        ? { ...line, status: "skipped", reason: done }
        : { ...line, status: "reverted", revertedTo: done.configurable?.checkpoint_id };
    } catch (error) {
      yield { ...line, status: "failed", reason: failureText(error) };
    }
  }
}
