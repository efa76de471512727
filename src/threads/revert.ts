/**
 * Undoing `repair --apply`: the manifest it wrote lists each changed thread with its head before and after
 * (`ManifestLine`); a revert makes each thread's head hold what its previous head held again, as a NEW checkpoint on
 * top (history kept, nothing deleted). A thread that moved on since the repair (its head is no longer the repair's
 * checkpoint) is skipped: a revert would drop what was written after it.
 *
 * The loop does not care where a thread lives: a `RevertTarget` reads a head and restores one. `saverTarget` is the
 * one for a checkpoint saver; another store (an Agent Server's API) brings its own.
 */
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { Dict } from "../values";
import { checkpointIdOf, failureText } from "./scan";
import { configOf, writeOnTop } from "./write";

/** One line of a manifest (JSON): a thread `repair --apply` changed, its head before (`previous...`) and after. */
export interface ManifestLine {
  thread: string;
  namespace: string;
  previousCheckpointId: string;
  checkpointId: string;
}

/** What a revert needs of a store: a thread's head, and a restore (the new head's id, or why not). */
export interface RevertTarget {
  head(line: ManifestLine): Promise<string | undefined>;
  /** Called when the head is `line.checkpointId`: a new checkpoint on top holding what `previousCheckpointId` held. */
  restore(line: ManifestLine): Promise<{ checkpointId: string } | string>;
}

/** `revertedTo`: the new head (reverted); `reason`: why not (skipped, failed). */
export type RevertReport = ManifestLine & {
  status: "reverted" | "skipped" | "failed";
  revertedTo?: string;
  reason?: string;
};

/** Each line reverted in turn, one report each; stops between threads once `signal` aborts. */
export async function* revertThreads(lines: readonly ManifestLine[], target: RevertTarget, signal?: AbortSignal) {
  for (const line of lines) {
    if (signal?.aborted) return;
    const report = async (): Promise<RevertReport> => {
      const head = await target.head(line);
      const done =
        head === line.checkpointId
          ? await target.restore(line)
          : `it moved on since the repair: its head is ${head}, not ${line.checkpointId}`;
      return typeof done === "string"
        ? { ...line, status: "skipped", reason: done }
        : { ...line, status: "reverted", revertedTo: done.checkpointId };
    };
    yield await report().catch((error): RevertReport => ({ ...line, status: "failed", reason: failureText(error) }));
  }
}

/** A checkpoint saver as a revert target: the previous head's messages (under `messagesKey`) written on top. */
export function saverTarget(saver: BaseCheckpointSaver, messagesKey: string): RevertTarget {
  const read = (line: ManifestLine, id?: string) =>
    saver.getTuple(configOf({ threadId: line.thread, namespace: line.namespace }, id));
  return {
    head: async (line) => checkpointIdOf(await read(line)),
    async restore(line) {
      const [head, previous] = [await read(line, line.checkpointId), await read(line, line.previousCheckpointId)];
      const messages = (previous?.checkpoint.channel_values as Dict | undefined)?.[messagesKey];
      if (!Array.isArray(messages)) return `checkpoint ${line.previousCheckpointId} holds no "${messagesKey}"`;
      const marker = { reverted: line.checkpointId, restores: line.previousCheckpointId };
      const written = await writeOnTop(
        saver,
        { threadId: line.thread, namespace: line.namespace },
        head!,
        messagesKey,
        messages,
        marker,
      );
      return typeof written === "string" ? written : { checkpointId: written.configurable?.checkpoint_id };
    },
  };
}
