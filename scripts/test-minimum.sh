#!/usr/bin/env bash
# `bash scripts/test-minimum.sh [args for vitest run]`: the test suite at the package's minimum peer versions
# (scripts/minimum-suite.json: every peer at the lower bound of its range, the provider clients at the newest
# release those peers admit). Runs in a copy of the working tree, .tmp/minimum, with a copy of node_modules, so
# the repository's own install is left as it is. Tests that pin what a newer dependency does (an adapter's
# payload, zod 4's API) say so (test/support/versions.ts) and are skipped there with that reason.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
copy=.tmp/minimum
rm -rf "$copy"
mkdir -p "$copy"
# Tracked files and new ones not ignored (a clean clone in CI; a working tree with new files locally).
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d "" f; do [ -e "$f" ] && printf "%s\0" "$f"; done | xargs -0 cp --parents -t "$copy"
cp -a node_modules "$copy/node_modules"
cd "$copy"
spec() { node -e 'const m = require("./scripts/minimum-suite.json"); const v = { ...m.peers, ...m.clients }; console.log(Object.keys(v).map((k) => `${k}@${v[k]}`).join(" "))'; }
excludes() { node -e 'const m = require("./scripts/minimum-suite.json"); for (const [f, why] of Object.entries(m.exclude)) { console.error(`test-minimum: leaves out ${f}: ${why}`); console.log(`--exclude=${f}`); }'; }
versions=$(spec)
[ -n "$versions" ]
# Some test-only packages name newer cores in their own peer ranges (the Google clients, the savers'
# conformance suite): npm overrides those, with a warning.
npm install --no-save --no-audit --no-fund --loglevel=error $versions >/dev/null
echo "test-minimum: $versions"
node -e 'const m = require("./scripts/minimum-suite.json"); for (const [p, v] of Object.entries({ ...m.peers, ...m.clients })) { const got = require(`./node_modules/${p}/package.json`).version; if (got !== v) { console.error(`test-minimum: ${p} is ${got}, not ${v}`); process.exit(1); } }'
exclude_list=$(excludes)
mapfile -t exclude_args <<< "$exclude_list"
npx vitest run "${exclude_args[@]}" "$@"
