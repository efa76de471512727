// `npm run test:consumers [-- name ...]`: the package as users get it. Packs the built package (`npm pack`),
// then for each consumer in consumers.json (default: all) makes a project in a fresh temporary directory
// (outside the repository, so nothing resolves from the repository's node_modules), installs the tarball with
// that consumer's peer versions from the registry, and runs app/: an ESM and a CommonJS consumer (esm.mjs,
// cjs.cjs) and a TypeScript one (typed.ts) compiled with moduleResolution nodenext (as .mts and .cts),
// node10 and bundler, each output run. An install that overrides a peer dependency fails the consumer.
// Needs `npm run build` first. Prints one line per consumer and step; exits non-zero on any failure.
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const repo = dirname(here);
const consumers = JSON.parse(readFileSync(join(here, "consumers.json"), "utf8"));
const names = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(consumers);
const tsc = join(repo, "node_modules", "typescript", "bin", "tsc");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

const scratch = mkdtempSync(join(tmpdir(), "lgtr-consumers-"));
let failed = 0;

/** Runs a command in `cwd`; returns its combined output, or throws with it. */
function run(cwd, command, args, env = {}) {
  const result = spawnSync(command, args, { cwd, env: { ...process.env, ...env }, encoding: "utf8" });
  const output = `${result.stdout ?? ""}${result.stderr ?? ""}`;
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${result.status}\n${output}`);
  return output;
}

function step(consumer, label, action) {
  const started = Date.now();
  try {
    const note = action();
    console.log(
      `  ok    ${consumer} ${label} (${((Date.now() - started) / 1000).toFixed(1)} s)${note ? `: ${note}` : ""}`,
    );
    return true;
  } catch (error) {
    failed++;
    console.log(`  FAIL  ${consumer} ${label}\n${String(error.message ?? error).replace(/^/gm, "        ")}`);
    return false;
  }
}

try {
  const packed = JSON.parse(
    execFileSync(npm, ["pack", "--json", "--ignore-scripts", "--pack-destination", scratch], {
      cwd: repo,
      encoding: "utf8",
    }),
  );
  const tarball = join(scratch, packed[0].filename);
  console.log(`test-consumers: ${packed[0].filename} (${packed[0].entryCount} files), consumers: ${names.join(", ")}`);

  for (const name of names) {
    const consumer = consumers[name];
    if (!consumer) throw new Error(`no consumer "${name}" in consumers.json`);
    const dir = join(scratch, name);
    cpSync(join(here, "app"), dir, { recursive: true });
    const withLangchain = !consumer.withoutLangchain;
    writeFileSync(
      join(dir, "package.json"),
      JSON.stringify(
        {
          name: `consumer-${name}`,
          private: true,
          dependencies: { "langgraph-tool-repair": `file:${tarball}`, ...consumer.dependencies },
        },
        null,
        2,
      ),
    );
    const env = withLangchain ? {} : { CONSUMER_WITHOUT_LANGCHAIN: "1" };

    const installed = step(name, "npm install", () => {
      const log = run(dir, npm, ["install", "--no-audit", "--no-fund"]);
      if (/ERESOLVE|overriding peer dependency/.test(log)) throw new Error(`npm resolved a peer conflict:\n${log}`);
      const versionOf = (pkg) =>
        JSON.parse(readFileSync(join(dir, "node_modules", pkg, "package.json"), "utf8")).version;
      return Object.keys(consumer.dependencies)
        .map((pkg) => `${pkg}@${versionOf(pkg)}`)
        .join(" ");
    });
    if (!installed) continue;

    step(name, "ESM", () => run(dir, "node", ["esm.mjs"], env).trim());
    step(name, "CommonJS", () => run(dir, "node", ["cjs.cjs"], env).trim());
    // typed.ts uses every entry, langchain included; without langchain, its langchain regions are left out.
    if (!withLangchain) {
      const typed = join(dir, "typed.ts");
      writeFileSync(
        typed,
        readFileSync(typed, "utf8").replace(
          /^\s*\/\/ #region langchain\n[\s\S]*?^\s*\/\/ #endregion langchain\n/gm,
          "",
        ),
      );
    }

    mkdirSync(join(dir, "nodenext"));
    cpSync(join(dir, "typed.ts"), join(dir, "nodenext", "typed.mts"));
    cpSync(join(dir, "typed.ts"), join(dir, "nodenext", "typed.cts"));
    step(name, "TypeScript nodenext (ESM and CJS)", () => {
      run(dir, "node", [tsc, "-p", "tsconfig.nodenext.json"]);
      return `${run(dir, "node", ["out/nodenext/typed.mjs"]).trim()} | ${run(dir, "node", ["out/nodenext/typed.cjs"]).trim()}`;
    });
    step(name, "TypeScript node10", () => {
      run(dir, "node", [tsc, "-p", "tsconfig.node10.json"]);
      return run(dir, "node", ["out/node10/typed.js"]).trim();
    });
    step(name, "TypeScript bundler", () => {
      run(dir, "node", [tsc, "-p", "tsconfig.bundler.json"]);
      writeFileSync(join(dir, "out", "bundler", "package.json"), '{ "type": "module" }\n');
      return run(dir, "node", ["out/bundler/typed.js"]).trim();
    });
  }
} finally {
  if (!process.env.KEEP_CONSUMERS) rmSync(scratch, { recursive: true, force: true });
  else console.log(`test-consumers: kept ${scratch}`);
}

console.log(failed ? `test-consumers: ${failed} step(s) failed` : "test-consumers: every consumer passed");
process.exitCode = failed ? 1 : 0;
