// Checks the built package as a consumer sees it: every entry point loads in ESM and CommonJS through the
// exports map, peers stay external (one @langchain/core), and messages from either module format of core
// are read alike.
import { createRequire } from "node:module";
import { readFileSync, readdirSync } from "node:fs";
import { execFileSync } from "node:child_process";

const require = createRequire(import.meta.url);
const fail = (msg) => {
  console.error(`check-dist: ${msg}`);
  process.exit(1);
};

const expected = {
  "langgraph-tool-repair": ["repairToolCalls", "findToolCallProblems", "toolCallIdsOf", "validateBedrockConverse", "findSafeSummarizationBoundary", "isBedrockModel"],
  "langgraph-tool-repair/langgraph": ["toolCallRepairNode", "toolCallRepairHook", "withToolCallRepair", "repairThread", "summarizationNode", "withPromptedStructuredOutput"],
  "langgraph-tool-repair/langchain": ["toolCallRepairMiddleware", "promptedStructuredOutputMiddleware"],
  "langgraph-tool-repair/threads": ["scanThreads", "repairThreads", "countThreads", "healStoredThread"],
};
for (const [entry, names] of Object.entries(expected)) {
  const esm = await import(entry);
  const cjs = require(entry);
  for (const name of names) {
    if (typeof esm[name] === "undefined") fail(`${entry} (ESM) does not export ${name}`);
    if (typeof cjs[name] === "undefined") fail(`${entry} (CJS) does not export ${name}`);
  }
}

for (const file of readdirSync("dist").filter((f) => /\.(c?js)$/.test(f))) {
  const text = readFileSync(`dist/${file}`, "utf8");
  if (/class AIMessage\b|class BaseCheckpointSaver\b/.test(text)) fail(`dist/${file} bundles a peer dependency`);
}

// The bin: package.json "bin" points at a built file that starts with a hashbang and answers --version.
const pkg = JSON.parse(readFileSync("package.json", "utf8"));
const bin = pkg.bin?.["langgraph-tool-repair"];
if (!bin || !readFileSync(bin, "utf8").startsWith("#!/usr/bin/env node")) fail(`bin ${bin} is missing or has no hashbang`);
const version = execFileSync(process.execPath, [bin, "--version"], { encoding: "utf8" }).trim();
if (version !== pkg.version) fail(`${bin} --version printed ${JSON.stringify(version)}, expected ${pkg.version}`);

const { repairToolCalls } = require("langgraph-tool-repair");
const coreCjs = require("@langchain/core/messages");
const coreEsm = await import("@langchain/core/messages");
for (const core of [coreCjs, coreEsm]) {
  const history = [new core.HumanMessage("hi"), new core.AIMessage({ content: "", tool_calls: [{ id: "a", name: "t", args: {} }] }), new core.HumanMessage("again")];
  const { repairs } = repairToolCalls(history, { provider: "openai" });
  if (repairs.length !== 1 || repairs[0].action !== "synthesized_result") fail("messages of one module format of core are not recognized");
}
console.log("check-dist: ESM and CommonJS entry points load, peers are external, core messages of both formats are read");
