/**
 * The previous release, for side-by-side timings in the same run: its commit's `src` is taken out of git into a
 * temporary folder (`git archive`, no network), built there with this repository's own tsup (its node_modules
 * linked in), and its entry point loaded. Kept per commit, so a second run builds nothing.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type * as Root from "../src/index";

/** The commit of the previous release, what this build is timed against: a release bumps it to its own commit. */
export const BASELINE = "6d39540";

const repo = fileURLToPath(new URL("..", import.meta.url));
const git = (...args: string[]) => execFileSync("git", args, { cwd: repo });

/** The previous release's main entry, built if this machine has not built it yet; `commit`: its full hash. */
export async function loadBaseline(): Promise<{ commit: string; root: Pick<typeof Root, "createRepairer"> }> {
  const commit = git("rev-parse", `${BASELINE}^{commit}`).toString().trim();
  const dir = join(tmpdir(), `langgraph-tool-repair-${commit}`);
  const entry = join(dir, "dist", "index.js");
  if (!existsSync(entry)) {
    // Built aside and renamed into place, so two benches started at once never load a half-built folder.
    const building = `${dir}.${process.pid}`;
    rmSync(building, { recursive: true, force: true });
    mkdirSync(building);
    execFileSync("tar", ["-x", "-C", building], {
      input: git("archive", commit, "src", "package.json", "tsconfig.json"),
    });
    symlinkSync(join(repo, "node_modules"), join(building, "node_modules"), "dir");
    execFileSync(
      join(repo, "node_modules", ".bin", "tsup"),
      ["src/index.ts", "--no-config", "--format", "esm", "--target", "node20", "--silent"],
      { cwd: building, stdio: "inherit" },
    );
    try {
      renameSync(building, dir);
    } catch {
      rmSync(building, { recursive: true, force: true }); // another run got there first
    }
  }
  return { commit, root: await import(pathToFileURL(entry).href) };
}
