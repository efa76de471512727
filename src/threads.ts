/**
 * `langgraph-tool-repair/threads`: scan and repair the threads stored in a checkpoint saver, offline and in
 * bulk (the library under the `langgraph-tool-repair` command). Needs `@langchain/langgraph-checkpoint` (an
 * optional peer of the package, required by this entry point), not `@langchain/langgraph`: a job that only
 * holds a saver does not load the graph runtime. `repairApiThreads` takes a `@langchain/langgraph-sdk` `Client`
 * (an optional peer) instead: a deployment's threads through its API.
 *
 * @module langgraph-tool-repair/threads
 */
export {
  scanThreads,
  type ThreadScanOptions,
  type ProviderSource,
  type ThreadReport,
} from "./threads/scan";
export {
  repairThreads,
  type ThreadRepairOptions,
  type ThreadRepairReport,
  type ThreadRepairStatus,
} from "./threads/repair";
export {
  repairStoredMessages,
  type RepairStoredMessagesOptions,
  type StoredRepair,
  type ThreadStatus,
} from "./threads/repair-thread";
export { repairApiThreads, type ApiThreadOptions } from "./threads/api";
export { REPAIR_METADATA_KEY, type RepairMetadata } from "./threads/write";
export type { Shard, ThreadKey } from "./threads/source";
