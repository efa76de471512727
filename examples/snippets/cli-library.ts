import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { seedThreads, startSeedModel } from "../../test/threads/support/seed";
import { check } from "./_support";

// A SqliteSaver file holding a thread broken by a real createAgent run (aborted mid-tool, then a new message
// the provider refused) and a clean one.
const dir = mkdtempSync(join(tmpdir(), "tool-repair-snippet-"));
const saver = SqliteSaver.fromConnString(join(dir, "threads.sqlite"));
const model = await startSeedModel("bedrock");
const seeded = await seedThreads(saver, model, { brokenSend: 1, clean: 1 });
const signal = new AbortController().signal;
const found: string[] = [];
const repaired: string[] = [];
const log = console.log;
console.log = (thread: string) => (found.length === 0 ? found : repaired).push(thread);

// #region docs
import { scanThreads, repairThreads } from "langgraph-tool-repair/threads";

for await (const report of scanThreads(saver, { provider: "bedrock", since: new Date("2026-05-01") })) {
  if (report.status === "broken")
    console.log(
      report.threadId,
      report.problems.map((p) => p.kind),
    );
}

for await (const r of repairThreads(saver, { apply: true, concurrency: 4, signal })) {
  if (r.status === "repaired") console.log(r.threadId, r.written?.configurable?.checkpoint_id, r.salvaged);
  if (r.status === "skipped" || r.status === "unreadable" || r.status === "failed") console.warn(r.threadId, r.reason);
}
// #endregion docs

try {
  console.log = log;
  check(
    found.join() === seeded.broken.join() && repaired.join() === seeded.broken.join(),
    "the broken thread is found, then repaired",
  );
  for await (const report of scanThreads(saver))
    check(report.status !== "broken", "nothing is broken after the repair");
} finally {
  console.log = log;
  saver.db.close();
  await model.stub.close();
  rmSync(dir, { recursive: true, force: true });
}
