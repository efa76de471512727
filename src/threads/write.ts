/**
 * Writing a fix (or a revert of one) as a NEW checkpoint on top of a thread, the way `graph.updateState` would, without the graph:
 * - the new checkpoint copies the latest one and replaces only the messages channel;
 * - that channel gets the next version after the highest version of the checkpoint (as `_applyWrites` gives
 *   every channel a step writes), and only it is in `newVersions`, so savers that store a blob per channel
 *   version (PostgreSQL) write just the messages;
 * - `versions_seen` is kept: no node is marked as having run, so the thread's next step is what it was (a
 *   resume runs the pending step on the repaired messages; a new input discards it, as always);
 * - metadata `source: "update"`, `step` one past the latest, the latest's `parents`; the put names the latest
 *   checkpoint as parent, so rolling back is reading the parent.
 * Nothing existing is edited or deleted. `updateState` also stores its write as a pending write of the old
 * checkpoint (for replays); that would change an existing checkpoint, so it is not done here.
 */
import {
  maxChannelVersion,
  uuid6,
  type BaseCheckpointSaver,
  type CheckpointMetadata,
  type CheckpointTuple,
} from "@langchain/langgraph-checkpoint";
import { name as TOOL_NAME, version as TOOL_VERSION } from "../../package.json";
import { nextBranchVersion } from "../integrations/checkpoint-versions";
import { checkpointIdOf } from "./scan";
import { configOf, type ThreadKey } from "./source";
import type { StoredRepair } from "./repair-thread";

/** What wrote a repair checkpoint (or a live one put back on top). */
const WRITER = { tool: TOOL_NAME, version: TOOL_VERSION };

/** Metadata key under which a repair checkpoint says what wrote it and why. */
export const REPAIR_METADATA_KEY = "tool_call_repair";

export interface RepairMetadata {
  tool: string;
  version: string;
  /** The checkpoint this one repairs (its parent). */
  repaired: string;
  repairs: { action: string; problem: string; toolCallId?: string; toolName?: string }[];
  /** Calls whose real result came back from the pending writes of an earlier checkpoint. */
  salvaged: string[];
}

/** The marker of a repair checkpoint written on top of checkpoint `repaired`. */
export const repairMarker = (repaired: string, fix: StoredRepair) => ({
  repaired,
  repairs: fix.repairs.map(({ action, problem, toolCallId, toolName }) => ({
    action,
    problem,
    ...(toolCallId && { toolCallId }),
    ...(toolName && { toolName }),
  })),
  salvaged: fix.salvaged,
});

/**
 * Stores `messages` as a checkpoint on top of `latest` (its config; else why not), marked with `marker` (what wrote
 * it is added), unless the thread moved on since `latest` was read, then checks that no other writer slipped in
 * between that check and the put. The new checkpoint's id is made before the check, so a checkpoint a live run
 * makes later sorts after it and stays the latest. A live checkpoint made before it but stored after the check
 * would sort below the write and be hidden by it: it is then copied back on top, so the thread continues from the
 * live run's state and the write is dropped. Used for a repair (`repairMarker`) and for a revert.
 */
export async function writeOnTop(
  saver: BaseCheckpointSaver,
  key: ThreadKey,
  latest: CheckpointTuple,
  messagesKey: string,
  messages: unknown[],
  marker: Record<string, unknown>,
) {
  const { checkpoint: base, metadata } = latest;
  const expected = checkpointIdOf(latest)!;
  const step = typeof metadata?.step === "number" ? metadata.step : -1;
  const versions = Object.values(base.channel_versions ?? {});
  const version = nextBranchVersion(saver, versions.length ? maxChannelVersion(...versions) : undefined);
  // Made before the check: a checkpoint a live run makes later sorts after it.
  const checkpoint = {
    v: base.v ?? 4,
    id: uuid6(step + 1),
    ts: new Date().toISOString(),
    channel_values: { ...base.channel_values, [messagesKey]: messages },
    channel_versions: { ...base.channel_versions, [messagesKey]: version },
    versions_seen: structuredClone(base.versions_seen ?? {}),
  };
  const before = checkpointIdOf(await saver.getTuple(configOf(key)));
  if (before !== expected)
    return `a newer checkpoint (${before ?? "none"}) was written after ${expected} was read: a live run is using this thread`;
  const parents = metadata?.parents ?? {};
  const written = { source: "update", step: step + 1, parents, [REPAIR_METADATA_KEY]: { ...WRITER, ...marker } };
  const config = await saver.put(configOf(key, expected), checkpoint, written as CheckpointMetadata, {
    [messagesKey]: version,
  });
  const ours = config.configurable?.checkpoint_id ?? checkpoint.id;
  // Newest first: ours, then the checkpoint it was written on. Anything else in between is a live write.
  const newest: CheckpointTuple[] = [];
  for await (const tuple of saver.list(configOf(key), { limit: 2 })) newest.push(tuple);
  const [first, second] = newest;
  const firstId = checkpointIdOf(first);
  if (firstId !== ours)
    return first?.parentConfig?.configurable?.checkpoint_id === ours
      ? config
      : `a live run wrote checkpoint ${firstId} right after ours; the thread goes on from it`;
  const liveId = checkpointIdOf(second);
  if (liveId === expected) return config;
  // A live checkpoint landed between the check and the put, below ours: put it back on top.
  const copy = { ...second.checkpoint, id: uuid6(-1), ts: new Date().toISOString() };
  const restored = { ...second.metadata, [REPAIR_METADATA_KEY]: { ...WRITER, restored: liveId } } as CheckpointMetadata;
  await saver.put(configOf(key, ours), copy, restored, { ...second.checkpoint.channel_versions });
  return `a live run wrote checkpoint ${liveId} while ours was being written; it was put back on top`;
}
