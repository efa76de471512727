// `npm test` and `npm run demo` on a fresh clone: installs from the lockfile first when nothing is installed
// yet, so the quick start is one command each. An existing install is left alone (CI installs first).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

if (!existsSync(new URL("../node_modules/.package-lock.json", import.meta.url))) {
  console.log("First run: installing from the lockfile (npm ci; builds better-sqlite3 from source, about a minute)");
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const { status } = spawnSync(npm, ["ci", "--no-audit", "--no-fund"], { stdio: "inherit" });
  if (status !== 0) process.exit(status ?? 1);
}
