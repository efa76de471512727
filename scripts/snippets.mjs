// Keeps every code block of README.md, CONTRIBUTING.md and docs/*.md compiled and run (see CONTRIBUTING.md).
//
//   node scripts/snippets.mjs check   every block matches its source, every snippet file is used, every
//                                     snippet runs (exit 0) and every output block is what its snippet prints
//   node scripts/snippets.mjs sync    rewrites the blocks from their sources (then review the diff)
//
// A TypeScript block is preceded by `<!-- snippet: examples/snippets/NAME.ts -->` and is the text between
// `// #region docs` and `// #endregion docs` in that file (dedented). Code outside the region is setup the
// reader does not need (local provider stubs, sample data) and checks that the shown code did what it says.
// A block of program output is preceded by `<!-- snippet-output: examples/snippets/NAME.ts -->` and is what
// that file prints. A shell block holds commands that .ci/run runs or that name an npm script. Relative links
// of README.md and docs/ must reach files the package ships.
// Snippet files are typechecked with everything else (`npm run typecheck`).
import { spawn } from "node:child_process";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const repo = dirname(dirname(fileURLToPath(import.meta.url)));
const SNIPPETS = "examples/snippets";
const mode = process.argv[2];
if (mode !== "check" && mode !== "sync") {
  console.error("usage: node scripts/snippets.mjs check|sync");
  process.exit(2);
}

const docs = [
  "README.md",
  "CONTRIBUTING.md",
  ...readdirSync(join(repo, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
].filter((f) => {
  try {
    readFileSync(join(repo, f));
    return true;
  } catch {
    return false;
  }
});
const snippetFiles = readdirSync(join(repo, SNIPPETS))
  .filter((f) => f.endsWith(".ts") && !f.startsWith("_"))
  .map((f) => `${SNIPPETS}/${f}`);
const TS_LANGS = new Set(["ts", "typescript"]);
const SHELL_LANGS = new Set(["sh", "bash", "shell"]);
const problems = [];
const problem = (where, text) => problems.push(`${where}: ${text}`);

/** The fenced blocks of a Markdown file, with the marker on the nearest non-blank line above each. */
function blocksOf(file, text) {
  const lines = text.split("\n");
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const close = lines.findIndex((line, j) => j > i && /^```\s*$/.test(line));
    if (close < 0) {
      problem(`${file}:${i + 1}`, "code block is never closed");
      break;
    }
    let above = i - 1;
    while (above >= 0 && lines[above].trim() === "") above--;
    const marker = above >= 0 ? /^<!--\s*snippet(-output)?:\s*(\S+)\s*-->$/.exec(lines[above].trim()) : null;
    blocks.push({
      file,
      line: i + 1,
      lang: open[1],
      start: i + 1,
      end: close,
      body: lines.slice(i + 1, close).join("\n"),
      marker: marker ? { output: Boolean(marker[1]), path: marker[2] } : undefined,
    });
    i = close;
  }
  return blocks;
}

/** The shown part of a snippet file: the lines between its region markers, dedented. */
function regionOf(path) {
  const lines = readFileSync(join(repo, path), "utf8").split("\n");
  const start = lines.findIndex((l) => l.trim() === "// #region docs");
  const end = lines.findIndex((l) => l.trim() === "// #endregion docs");
  if (start < 0 || end < start) throw new Error(`${path} has no "// #region docs" ... "// #endregion docs"`);
  const region = lines.slice(start + 1, end);
  const indent = Math.min(...region.filter((l) => l.trim()).map((l) => /^ */.exec(l)[0].length));
  return region.map((l) => l.slice(indent)).join("\n");
}

/** Runs a snippet with tsx (third-party notices off); resolves to { code, stdout, stderr }. */
function runSnippet(path) {
  return new Promise((resolve) => {
    const tsx = join(repo, "node_modules", "tsx", "dist", "cli.mjs");
    const child = spawn(process.execPath, [tsx, "--env-file=scripts/quiet.env", path], { cwd: repo });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Each shell command must be one .ci/run runs, or an npm script that exists. */
function checkShell(block) {
  const ci = readFileSync(join(repo, ".ci/run"), "utf8");
  const scripts = JSON.parse(readFileSync(join(repo, "package.json"), "utf8")).scripts;
  for (const raw of block.body.split("\n")) {
    const command = raw.replace(/#.*$/, "").trim();
    if (!command) continue;
    const script = /^npm (?:run (\S+)|(test))\b/.exec(command);
    const known = ci.includes(command) || (script && scripts[script[1] ?? script[2]] !== undefined);
    // Installing the package itself is what test-consumers/ does, from the packed tarball; the command's
    // own subcommands are run by its tests (test/cli).
    const install = /^npm install langgraph-tool-repair\b/.test(command);
    const cli = /^npx langgraph-tool-repair (scan|repair|revert|--help)\b/.test(command);
    if (!known && !install && !cli)
      problem(`${block.file}:${block.line}`, `shell command "${command}" is neither run by .ci/run nor an npm script`);
  }
}

/**
 * Relative Markdown links of the shipped docs (README.md, docs/) must reach a file the package ships
 * (package.json `files`), since npm shows the tarball's copy. CONTRIBUTING.md is shipped too, but it is read in
 * the repository (it links src/ and test/, which the tarball does not hold), so its links are not checked here.
 */
function checkLinks(file, text) {
  if (file === "CONTRIBUTING.md") return;
  const shipped = JSON.parse(readFileSync(join(repo, "package.json"), "utf8")).files.map((f) => f.replace(/\/$/, ""));
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:|^#/.test(target)) continue;
    const path = relative(repo, join(repo, dirname(file), target.split("#")[0]));
    try {
      readFileSync(join(repo, path));
    } catch {
      problem(file, `link to ${target}: no such file`);
      continue;
    }
    if (!shipped.some((f) => path === f || path.startsWith(`${f}/`)))
      problem(file, `link to ${target}: ${path} is not in the package's files`);
  }
}

const used = new Set();
const outputs = [];
/** In sync mode: per file, its lines and the blocks to replace (applied once, at the end). */
const rewrites = new Map();
for (const file of docs) {
  const text = readFileSync(join(repo, file), "utf8");
  const lines = text.split("\n");
  const replacements = [];
  rewrites.set(file, { lines, replacements });
  checkLinks(file, text);
  for (const block of blocksOf(file, text)) {
    const where = `${file}:${block.line}`;
    if (SHELL_LANGS.has(block.lang)) {
      checkShell(block);
      continue;
    }
    if (!block.marker) {
      problem(
        where,
        `${block.lang || "untyped"} block without <!-- snippet: ${SNIPPETS}/NAME.ts --> (or snippet-output:) on the line above`,
      );
      continue;
    }
    const { path, output } = block.marker;
    if (!snippetFiles.includes(path)) {
      problem(where, `${path} is not a snippet file (${SNIPPETS}/*.ts)`);
      continue;
    }
    used.add(path);
    if (output) {
      outputs.push({ block, path });
      continue;
    }
    if (!TS_LANGS.has(block.lang)) problem(where, `a snippet block must be \`\`\`ts (this one is "${block.lang}")`);
    let region;
    try {
      region = regionOf(path);
    } catch (error) {
      problem(where, error.message);
      continue;
    }
    if (region === block.body) continue;
    if (mode === "sync") replacements.push({ block, body: region });
    else problem(where, `block differs from the region of ${path} (edit the file, then npm run docs:sync)`);
  }
}

for (const path of snippetFiles) if (!used.has(path)) problem(path, "no README or docs block shows this snippet");

// The README is the front page: what the package does, install, the setups, the CLI, links into docs/ (issue 32).
const README_MAX_LINES = 200;
const readmeLines = readFileSync(join(repo, "README.md"), "utf8").trimEnd().split("\n").length;
if (readmeLines > README_MAX_LINES)
  problem("README.md", `${readmeLines} lines; at most ${README_MAX_LINES} (the rest goes to docs/)`);

/** Replaces block bodies (bottom up, so line numbers stay valid) and writes the file. */
function rewrite(file, lines, replacements) {
  for (const { block, body } of [...replacements].sort((a, b) => b.block.start - a.block.start))
    lines.splice(block.start, block.end - block.start, ...body.split("\n"));
  writeFileSync(join(repo, file), lines.join("\n"));
  console.log(`snippets: rewrote ${replacements.length} block(s) of ${file}`);
}

// Run every snippet (two at a time: the machine has two cores), keeping stdout for the output blocks.
const results = new Map();
const queue = [...snippetFiles];
const started = Date.now();
await Promise.all(
  [0, 1].map(async () => {
    for (let path = queue.shift(); path; path = queue.shift()) results.set(path, await runSnippet(path));
  }),
);
for (const [path, { code, stdout, stderr }] of results)
  if (code !== 0) problem(path, `exited ${code}\n${(stdout + stderr).trim().replace(/^/gm, "    ")}`);

const trimEnd = (s) => s.replace(/\s+$/, "");
for (const { block, path } of outputs) {
  const printed = trimEnd(results.get(path)?.stdout ?? "");
  if (printed === trimEnd(block.body)) continue;
  if (mode === "sync") rewrites.get(block.file).replacements.push({ block, body: printed });
  else problem(`${block.file}:${block.line}`, `block is not what ${path} prints:\n${printed.replace(/^/gm, "    ")}`);
}
for (const [file, { lines, replacements }] of rewrites) if (replacements.length) rewrite(file, lines, replacements);

const seconds = ((Date.now() - started) / 1000).toFixed(1);
if (problems.length) {
  console.error(problems.map((p) => `snippets: ${p}`).join("\n"));
  console.error(`snippets: ${problems.length} problem(s)`);
  process.exit(1);
}
console.log(
  `snippets: ${used.size} snippet files behind the code blocks of ${docs.map((d) => relative(".", d)).join(", ")}; all ran (${seconds} s)`,
);
