/**
 * Channel versions that two branches of one thread never share.
 *
 * LangGraph.js counts channel versions with plain integers (`BaseCheckpointSaver.getNextVersion`: current + 1),
 * and PostgresSaver stores each channel's value once per (thread, namespace, channel, version), keeping the first
 * writer's value on a conflict (`ON CONFLICT DO NOTHING`). Two checkpoints written from the same parent (two runs
 * that overlap after an abort, two workers, a live run beside an offline repair) therefore write the same
 * version, and the second one silently reads the first one's messages: a user message is lost and a call is left
 * unanswered. LangGraph Python avoids this with versions that carry a random part; this does the same while
 * staying a number, so versions already stored (integers) still compare in order (LangGraph.js compares two
 * numbers arithmetically, but a number and a string as text).
 */
import type { BaseCheckpointSaver, ChannelVersions } from "@langchain/langgraph-checkpoint";

/** A billion steps: two branches from one parent practically never draw the same fraction. */
const FRACTION_STEPS = 1_000_000_000;

/**
 * The version after `current`: the saver's own next version, plus a random fraction when the saver counts in
 * integers. Strictly greater than `current` (floor(current) + 1 + fraction > current), so LangGraph's ordering of
 * a thread's versions holds. A saver that counts in strings keeps its own scheme.
 */
export function nextBranchVersion(saver: BaseCheckpointSaver, current: ChannelVersions[string] | undefined) {
  if (typeof current === "string") return (saver as BaseCheckpointSaver<string | number>).getNextVersion(current);
  const base = saver.getNextVersion(current && Math.floor(current));
  if (!Number.isSafeInteger(base)) return base;
  return base + (1 + Math.floor(Math.random() * (FRACTION_STEPS - 1))) / FRACTION_STEPS;
}
