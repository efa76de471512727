/**
 * The recorded run of docs/cli.md: the demo's agent incident (examples/agent-demo.ts) leaves its thread broken in
 * .tmp/demo-threads.sqlite; then `scan`, `repair`, `repair --apply`, `scan` again, and `revert` (then the thread is as
 * it was, broken), exactly as the command runs
 * (runCli is the bin's body). Ids and times differ on every run: they are printed normalized (checkpoint ids,
 * message ids and tool call ids numbered in order of appearance, times fixed), so that the block can be checked.
 */
import { rmSync } from "node:fs";
import { agentDemo, DEMO_THREADS_DB } from "../agent-demo";
import { runCli } from "../../src/cli/main";
import { check } from "./_support";

// The demo prints its own story; here only the database it leaves matters.
const print = console.log;
console.log = () => {};
const demoPassed = await agentDemo();
console.log = print;
check(demoPassed, "the demo's incident was reproduced");

const numbered = new Map<string, string>();
const counters = new Map<string, number>();
function label(kind: string, raw: string): string {
  let name = numbered.get(raw);
  if (!name) {
    const n = (counters.get(kind) ?? 0) + 1;
    counters.set(kind, n);
    numbered.set(raw, (name = `${kind}${n}`));
  }
  return name;
}
const normalized = (text: string) =>
  text
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-6[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, (id) => label("ckpt-", id))
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-57-9a-f][0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, (id) => label("msg-", id))
    .replace(/\btooluse_[A-Za-z0-9]{24}\b/g, (id) => label("tooluse_", id))
    .replace(/"writtenAt":"[^"]+"/g, '"writtenAt":"2026-05-03T09:30:00.000Z"');

const MANIFEST = ".tmp/demo-manifest.jsonl";
rmSync(MANIFEST, { force: true }); // a manifest is never overwritten
const codes: number[] = [];
for (const args of [
  ["scan", "--sqlite", DEMO_THREADS_DB],
  ["repair", "--sqlite", DEMO_THREADS_DB],
  ["repair", "--sqlite", DEMO_THREADS_DB, "--apply", "--yes", "--manifest", MANIFEST],
  ["scan", "--sqlite", DEMO_THREADS_DB],
  ["scan", "--sqlite", DEMO_THREADS_DB, "--provider", "bedrock", "--json"],
  ["revert", "--sqlite", DEMO_THREADS_DB, "--manifest", MANIFEST, "--yes"],
  ["scan", "--sqlite", DEMO_THREADS_DB],
]) {
  let out = "";
  const write = (text: string) => (out += text);
  const code = await runCli(args, { stdout: { write }, stderr: { write } });
  codes.push(code);
  print(`$ npx langgraph-tool-repair ${args.join(" ")}`);
  print(normalized(out).trimEnd());
  print(`$ echo $?\n${code}\n`);
}
check(
  codes.join(",") === "1,1,0,0,0,0,1",
  "scan finds the thread, the dry run would repair it, --apply repairs it, nothing is left, revert undoes it",
);
