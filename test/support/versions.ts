/**
 * The versions of the packages installed next to the tests. CI also runs the suite at the package's minimum
 * peer versions (scripts/test-minimum.sh), with the newest provider clients and savers those peers admit. A test
 * that pins what one version of a dependency does (an adapter's payload, a saver's write) says so with
 * {@link pinnedTo}, and is skipped, with the reason, on an older version.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** The installed version of `pkg` (read from node_modules, whatever its `exports` allow). */
export function installedVersion(pkg: string): string {
  return (
    JSON.parse(readFileSync(join(process.cwd(), "node_modules", pkg, "package.json"), "utf8")) as { version: string }
  ).version;
}

function compare(a: string, b: string): number {
  const pa = a.split(/[.-]/).map(Number);
  const pb = b.split(/[.-]/).map(Number);
  for (let i = 0; i < 3; i++) if ((pa[i] || 0) !== (pb[i] || 0)) return (pa[i] || 0) - (pb[i] || 0);
  return 0;
}

/**
 * undefined when `pkg` is at least `version`; otherwise the reason to skip a test that pins `what` (the
 * behaviour of that version or later). Use as `it.skipIf(pinnedTo(...))` or `skip(reason)`.
 */
export function pinnedTo(pkg: string, version: string, what: string): string | undefined {
  const installed = installedVersion(pkg);
  return compare(installed, version) >= 0 ? undefined : `pins ${what} (${pkg} >= ${version}; installed ${installed})`;
}

/** Why a test written against zod 4's API (`.meta`) through `import { z } from "zod"` is skipped (zod 3.25 there). */
export const ZOD_4_PINNED = pinnedTo("zod", "4.0.0", "zod 4's API through the `zod` entry (`.meta`)");
