/** revertThreads on its own (the CLI's round trips are in test/cli/apply.test.ts): what it reads, and a thread gone. */
import { MemorySaver } from "@langchain/langgraph-checkpoint";
import { expect, it } from "vitest";
import { revertThreads, type RevertReport } from "../../src/threads/revert";

it("a thread deleted since the repair is skipped (its head is gone), and its previous checkpoint is never read", async () => {
  const saver = new MemorySaver();
  const read: unknown[] = [];
  const getTuple = saver.getTuple.bind(saver);
  saver.getTuple = (config) => {
    read.push(config.configurable?.checkpoint_id);
    return getTuple(config);
  };
  const line = { thread: "deleted", namespace: "", previousCheckpointId: "before", checkpointId: "repair" };
  const reports: RevertReport[] = [];
  for await (const report of revertThreads(saver, "messages", [line])) reports.push(report);
  expect(reports).toEqual([
    { ...line, status: "skipped", reason: "it moved on since the repair: its head is gone, not repair" },
  ]);
  expect(read).toEqual([undefined]);
});
