/**
 * Finished tool results that LangGraph discarded. With one task per call (`Send`, createAgent's default),
 * each call that finished before a run stopped left its ToolMessage as a pending write of the checkpoint the
 * calls were scheduled at. A new input drops those writes from the run, but nothing deletes them from the
 * saver: walking back from the latest checkpoint finds them.
 */
import type { ToolMessage } from "@langchain/core/messages";
import type { BaseCheckpointSaver, CheckpointTuple } from "@langchain/langgraph-checkpoint";
import { isAssistant, isNoResult, isToolResult, resultIdOf, toolCallIdsOf } from "../messages/inspect";

/**
 * Real tool results in pending writes of `channel` (a task's write is one message or a list of them), for the
 * given calls only; placeholders (the package's or another library's) never count as real work.
 */
export function resultsInWrites(
  writes: readonly (readonly [string, string, unknown])[] | undefined,
  channel: string,
  wanted: ReadonlySet<string>,
) {
  const found = new Map<string, ToolMessage>();
  for (const [, written, value] of wanted.size ? (writes ?? []) : [])
    for (const item of written === channel ? [value].flat() : []) {
      const id = isToolResult(item) && !isNoResult(item) ? resultIdOf(item) : undefined;
      if (id !== undefined && wanted.has(id) && !found.has(id)) found.set(id, item as ToolMessage);
    }
  return found;
}

/**
 * Real results for `wanted` calls in the pending writes of `latest` and its ancestors (at most 10,000 checkpoints
 * back; the walk normally ends far sooner, where the calls were made). The walk stops once every call is found,
 * or at the first ancestor that does not hold a call any more (it was made later: nothing older can hold its
 * result). `visit` sees each checkpoint whose pending writes were read; `passed` each call the walk went past the
 * origin of (or the thread's start) without finding a result: nothing stored holds one.
 */
export async function discardedResults(
  saver: BaseCheckpointSaver,
  latest: CheckpointTuple | undefined,
  messagesKey: string,
  wanted: ReadonlySet<string>,
  visit?: (tuple: CheckpointTuple) => void,
  passed?: (id: string) => void,
) {
  const found = new Map<string, ToolMessage>();
  const remaining = new Set(wanted);
  let current = latest;
  for (let depth = 0; current && remaining.size && depth < 10_000; depth++) {
    visit?.(current);
    for (const [id, result] of resultsInWrites(current.pendingWrites, messagesKey, remaining)) {
      found.set(id, result);
      remaining.delete(id);
    }
    if (!remaining.size) break;
    current = current.parentConfig && (await saver.getTuple(current.parentConfig));
    const stored = current?.checkpoint?.channel_values?.[messagesKey];
    const there = new Set(Array.isArray(stored) ? stored.filter(isAssistant).flatMap(toolCallIdsOf) : []);
    for (const id of remaining)
      if (!there.has(id)) {
        remaining.delete(id);
        passed?.(id);
      }
  }
  return found;
}
