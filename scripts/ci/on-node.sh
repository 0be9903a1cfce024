#!/usr/bin/env bash
# Runs a command under another Node (24 or 26 from the runtimes cache) with better-sqlite3 built for it, then puts
# back the machine Node's build. Each Node's build of better-sqlite3 is kept in the cache, keyed by its version and
# the Node ABI, so it is compiled once (the machine's npm points node-gyp at Node 20's headers; the `node` package
# carries the right ones).
#   scripts/ci/on-node.sh 24|26 <command…>
set -euo pipefail
cd "$(dirname "$0")/../.."
eval "$(scripts/ci/runtimes.sh)"
case "$1" in
  24) bin=$NODE24 headers=$NODE24_HEADERS ;;
  26) bin=$NODE26 headers=$NODE26_HEADERS ;;
  *) echo "on-node.sh: Node 24 or 26, not $1" >&2; exit 2 ;;
esac
shift
CACHE="${CHAINMAIL_CI_CACHE:-$HOME/.cache/chainmail-ci}"
addon=node_modules/better-sqlite3/build/Release/better_sqlite3.node
sqlite_version=$(node -p 'require("./node_modules/better-sqlite3/package.json").version')
abi=$("$bin/node" -p process.versions.modules)
built="$CACHE/better-sqlite3-$sqlite_version-abi$abi/better_sqlite3.node"
own=$(mktemp)
cp "$addon" "$own"
restore() { cp "$own" "$addon"; rm -f "$own"; }
trap restore EXIT
if [ ! -f "$built" ]; then
  echo "on-node: building better-sqlite3 $sqlite_version for Node ABI $abi" >&2
  PATH="$bin:$PATH" npm rebuild better-sqlite3 --nodedir="$headers" >&2
  mkdir -p "$(dirname "$built")"
  cp "$addon" "$built.tmp" && mv "$built.tmp" "$built"
else
  cp "$built" "$addon"
fi
echo "on-node: $("$bin/node" --version)" >&2
PATH="$bin:$PATH" "$@"
