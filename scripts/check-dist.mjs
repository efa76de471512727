// Checks the built package as a consumer sees it: every entry point loads in ESM and CommonJS through the
// exports map, peers stay external (one @langchain/core), messages from either module format of core are
// read alike, and the entry points share their code (one copy of each class per module format, so an error
// thrown by `/langgraph` or `/langchain` is an `instanceof` the class exported by the root entry).
import { createRequire } from "node:module";
import { readFileSync, readdirSync } from "node:fs";
import { execFileSync } from "node:child_process";

const require = createRequire(import.meta.url);
const fail = (msg) => {
  console.error(`check-dist: ${msg}`);
  process.exit(1);
};

const expected = {
  "langgraph-tool-repair": [
    "repairToolCalls",
    "findToolCallProblems",
    "withRequestRepair",
    "findSafeSummarizationBoundary",
    "structuredOutputStrategies",
  ],
  "langgraph-tool-repair/langgraph": [
    "toolCallRepairNode",
    "toolCallRepairHook",
    "withToolCallRepair",
    "repairThread",
    "summarizationNode",
    "withPromptedStructuredOutput",
  ],
  "langgraph-tool-repair/langchain": ["toolCallRepairMiddleware", "promptedStructuredOutputMiddleware"],
  "langgraph-tool-repair/threads": ["scanThreads", "repairThreads", "repairStoredMessages", "REPAIR_METADATA_KEY"],
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

// One definition of each class per module format: the entries import shared chunks instead of copying them.
for (const ext of ["js", "cjs"]) {
  const definedIn = new Map();
  for (const file of readdirSync("dist").filter((f) => f.endsWith(`.${ext}`))) {
    for (const [, name] of readFileSync(`dist/${file}`, "utf8").matchAll(
      /^(?:export )?(?:var|let|const) (\w+) = class\b/gm,
    )) {
      if (definedIn.has(name)) fail(`class ${name} is defined in both dist/${definedIn.get(name)} and dist/${file}`);
      definedIn.set(name, file);
    }
  }
  if (!definedIn.has("ToolCallRepairInputError"))
    fail(`no .${ext} file defines ToolCallRepairInputError (the class scan is broken)`);
}

// The same class object across entries, in both formats: an error from the /langgraph node and from the
// /langchain middleware is an instance of the root entry's ToolCallRepairInputError.
for (const [format, load] of [
  ["ESM", (e) => import(e)],
  ["CJS", async (e) => require(e)],
]) {
  const root = await load("langgraph-tool-repair");
  const langgraph = await load("langgraph-tool-repair/langgraph");
  const langchain = await load("langgraph-tool-repair/langchain");
  // Surfaces never fail the run: the error they could not repair reaches onError.
  let fromNode;
  await langgraph.toolCallRepairNode({ provider: "openai", onError: (error) => (fromNode = error) })({
    messages: [42],
  });
  if (!(fromNode instanceof root.ToolCallRepairInputError))
    fail(
      `${format}: an error from the /langgraph node is not an instance of the root entry's ToolCallRepairInputError`,
    );
  let fromMiddleware;
  const middleware = langchain.toolCallRepairMiddleware({
    provider: "openai",
    onError: (error) => (fromMiddleware = error),
  });
  await middleware.beforeAgent({ messages: [42] });
  if (!(fromMiddleware instanceof root.ToolCallRepairInputError))
    fail(
      `${format}: an error from the /langchain middleware is not an instance of the root entry's ToolCallRepairInputError`,
    );
}

// The bin: package.json "bin" points at a built file that starts with a hashbang and answers --version.
const pkg = JSON.parse(readFileSync("package.json", "utf8"));
const bin = pkg.bin?.["langgraph-tool-repair"];
if (!bin || !readFileSync(bin, "utf8").startsWith("#!/usr/bin/env node"))
  fail(`bin ${bin} is missing or has no hashbang`);
const version = execFileSync(process.execPath, [bin, "--version"], { encoding: "utf8" }).trim();
if (version !== pkg.version) fail(`${bin} --version printed ${JSON.stringify(version)}, expected ${pkg.version}`);

const { repairToolCalls } = require("langgraph-tool-repair");
const coreCjs = require("@langchain/core/messages");
const coreEsm = await import("@langchain/core/messages");
for (const core of [coreCjs, coreEsm]) {
  const history = [
    new core.HumanMessage("hi"),
    new core.AIMessage({ content: "", tool_calls: [{ id: "a", name: "t", args: {} }] }),
    new core.HumanMessage("again"),
  ];
  const { repairs } = repairToolCalls(history, { provider: "openai" });
  if (repairs.length !== 1 || repairs[0].action !== "synthesized_result")
    fail("messages of one module format of core are not recognized");
}
console.log(
  "check-dist: ESM and CommonJS entry points load and share one copy of each class, peers are " +
    "external, core messages of both formats are read",
);
