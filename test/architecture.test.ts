/**
 * The house stays as it is (ARCHITECTURE.md): every import goes to the same layer or a lower one, surfaces reach
 * the engine only through its front door (src/engine/index.ts), there are no import cycles, and the main
 * entry point needs nothing but @langchain/core. A stored thread is repaired in one module under one word.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { codeSizes } from "../scripts/code-size.mjs";

const SRC = resolve(__dirname, "../src");
const ROOT = resolve(__dirname, "..");

/** The package's entry points (package.json `exports`), each with its source file. */
const ENTRIES: Record<string, string> = {
  ".": "index.ts",
  "./langgraph": "langgraph.ts",
  "./langchain": "langchain.ts",
  "./threads": "threads.ts",
};
/**
 * Runtime exports (values: functions, classes, constants; types do not count) of the four entries together.
 * What users call; helpers only tests need are imported by the tests from their src module.
 */
const RUNTIME_EXPORT_BUDGET = 40;
/**
 * Bytes of code in `src`, comments and blank lines aside (`node scripts/code-size.mjs`): at most 400 KB (issue 21,
 * from 594 KB), and it can only shrink.
 */
const CODE_BUDGET_BYTES = 400_000;

/** Lower numbers are lower layers. A directory (or top-level file) not listed fails the test: place it. */
const LAYERS: Record<string, number> = {
  "values.ts": 0,
  "errors.ts": 0,
  "options.ts": 0,
  "types.ts": 0,
  messages: 1,
  models: 2,
  engine: 3,
  summarize: 4,
  recovery: 4,
  integrations: 5,
  structured: 5,
  threads: 5,
  cli: 6,
  "index.ts": 7,
  "langgraph.ts": 7,
  "langchain.ts": 7,
  "threads.ts": 7,
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith(".ts") ? [path] : [];
  });
}

/** The first path segment under src/: the unit a layer is assigned to. */
const unitOf = (file: string) => relative(SRC, file).split("/")[0];

/** `loaded`: the import loads the module when the file loads (not `import type`, not a dynamic `import()`). */
function importsOf(file: string): { specifier: string; target?: string; loaded: boolean }[] {
  const text = readFileSync(file, "utf8");
  const found: { specifier: string; target?: string; loaded: boolean }[] = [];
  for (const match of text.matchAll(
    /(?:^|\n)\s*(?:import|export)\b[^"'`;]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g,
  )) {
    const specifier = match[1] ?? match[2];
    const loaded = match[1] !== undefined && !/^\s*(?:import|export)\s+type\b/.test(match[0]);
    if (!specifier.startsWith(".")) {
      found.push({ specifier, loaded });
      continue;
    }
    let target = resolve(dirname(file), specifier);
    if (!target.endsWith(".ts")) target = statSafe(`${target}.ts`) ? `${target}.ts` : join(target, "index.ts");
    found.push({ specifier, target, loaded });
  }
  return found;
}

function statSafe(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

const files = sourceFiles(SRC);
const graph = new Map(files.map((file) => [file, importsOf(file)]));

describe("architecture", () => {
  it("every source file belongs to a layer", () => {
    const unplaced = [...new Set(files.map(unitOf))].filter((unit) => !(unit in LAYERS));
    expect(unplaced).toEqual([]);
  });

  it("ships the four entries, whose runtime exports stay within the budget", async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
    expect(Object.keys(pkg.exports).filter((key) => key !== "./package.json")).toEqual(Object.keys(ENTRIES));
    const counts: Record<string, number> = {};
    for (const [entry, file] of Object.entries(ENTRIES))
      counts[entry] = Object.keys(await import(join(SRC, file))).length;
    const total = Object.values(counts).reduce((sum, n) => sum + n, 0);
    expect(total, `runtime exports per entry: ${JSON.stringify(counts)}`).toBeLessThanOrEqual(RUNTIME_EXPORT_BUDGET);
  });

  it("keeps the code of src within its budget", () => {
    const files = codeSizes(SRC);
    const total = files.reduce((sum, file) => sum + file.bytes, 0);
    const largest = files.slice(0, 5).map((file) => `${file.path} ${file.bytes}`);
    expect(total, `largest files: ${largest.join(", ")}`).toBeLessThanOrEqual(CODE_BUDGET_BYTES);
  });

  it("imports go to the same layer or a lower one", () => {
    const upward: string[] = [];
    for (const [file, imports] of graph)
      for (const { target } of imports) {
        if (!target) continue;
        const from = LAYERS[unitOf(file)];
        const to = LAYERS[unitOf(target)];
        if (to > from) upward.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
      }
    expect(upward).toEqual([]);
  });

  it("outside the engine, the engine is reached only through its front door (engine/index.ts)", () => {
    const sideDoors: string[] = [];
    for (const [file, imports] of graph) {
      if (unitOf(file) === "engine") continue;
      for (const { target } of imports)
        if (target && unitOf(target) === "engine" && relative(SRC, target) !== "engine/index.ts")
          sideDoors.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
    }
    expect(sideDoors).toEqual([]);
  });

  it("has no import cycle", () => {
    const state = new Map<string, "visiting" | "done">();
    const cycles: string[] = [];
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === "done") return;
      if (state.get(file) === "visiting") {
        cycles.push([...path.slice(path.indexOf(file)), file].map((f) => relative(SRC, f)).join(" -> "));
        return;
      }
      state.set(file, "visiting");
      for (const { target } of graph.get(file) ?? []) if (target && graph.has(target)) visit(target, [...path, file]);
      state.set(file, "done");
    };
    for (const file of files) visit(file, []);
    expect(cycles).toEqual([]);
  });

  /** The packages an entry reaches; with `loadedOnly`, only those loading the entry loads (no types, no `import()`). */
  const packagesReachedFrom = (entry: string, loadedOnly = false) => {
    const reached = new Set<string>();
    const packages = new Set<string>();
    const walk = (file: string) => {
      if (reached.has(file)) return;
      reached.add(file);
      for (const { specifier, target, loaded } of graph.get(file) ?? []) {
        if (loadedOnly && !loaded) continue;
        if (target) walk(target);
        else
          packages.add(
            specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0],
          );
      }
    };
    walk(join(SRC, entry));
    return [...packages].filter((p) => !p.startsWith("node:")).sort();
  };

  it("the main entry point reaches nothing but @langchain/core (langgraph and langchain are optional peers)", () => {
    expect(packagesReachedFrom("index.ts", true)).toEqual(["@langchain/core"]);
    // The one optional peer it may load, with a dynamic import when a repair is reported: metrics (integrations/events.ts).
    expect(packagesReachedFrom("index.ts")).toEqual(["@langchain/core", "@opentelemetry/api"]);
    const imports = files.flatMap((file) =>
      (graph.get(file) ?? [])
        .filter((i) => i.specifier === "@opentelemetry/api")
        .map((i) => `${relative(SRC, file)}${i.loaded ? " loads it" : ""}`),
    );
    expect([...new Set(imports)]).toEqual(["integrations/events.ts"]);
  });

  it("the /threads entry loads the checkpoint package, not the graph runtime (a job that only holds a saver)", () => {
    expect(packagesReachedFrom("threads.ts", true)).toEqual(["@langchain/core", "@langchain/langgraph-checkpoint"]);
  });

  it("a stored thread is repaired in one module (threads/repair-thread.ts), which every stored fix and the scan import", () => {
    const MODULE = join(SRC, "threads/repair-thread.ts");
    const defined = new Map<string, string[]>();
    for (const file of files)
      for (const [, fn, entry] of readFileSync(file, "utf8").matchAll(
        /export (?:async )?function (\w+)|export const (\w+) = boundary\(/g,
      ))
        defined.set(fn ?? entry, [...(defined.get(fn ?? entry) ?? []), relative(SRC, file)]);
    for (const name of [
      "repairThread",
      "repairStoredMessages",
      "createStoredRepairer",
      "putBackResults",
      "awaitsResume",
    ])
      expect([name, defined.get(name)]).toEqual([name, ["threads/repair-thread.ts"]]);
    const fixers = [
      "integrations/checkpointer.ts",
      "integrations/run-salvage.ts",
      "threads/repair.ts",
      "threads/scan.ts",
    ];
    const without = fixers.filter((f) => !(graph.get(join(SRC, f)) ?? []).some(({ target }) => target === MODULE));
    expect(without).toEqual([]);
  });

  it("one word for fixing a thread (repair): no file name or text under src uses the old synonym", () => {
    const OLD_WORD = /h[e]al/i; // spelled so that a grep for the word finds nothing left
    const other = files.filter(
      (file) => OLD_WORD.test(relative(SRC, file)) || OLD_WORD.test(readFileSync(file, "utf8")),
    );
    expect(other.map((file) => relative(SRC, file))).toEqual([]);
  });
});
