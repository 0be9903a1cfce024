#!/usr/bin/env bash
# Runs a command under another Node (22, 24 or 26 from the runtimes cache, installed there on first use). Nothing is
# rebuilt for it: on those Nodes chainmail's SQLite engine is Node's own node:sqlite, so the repository's
# better-sqlite3 (built for the machine's Node, the driver there) is never loaded.
#   scripts/ci/on-node.sh 22|24|26 <command…>
set -euo pipefail
cd "$(dirname "$0")/../.."
eval "$(scripts/ci/runtimes.sh)"
case "$1" in
  22) bin=$NODE22 ;;
  24) bin=$NODE24 ;;
  26) bin=$NODE26 ;;
  *) echo "on-node.sh: Node 22, 24 or 26, not $1" >&2; exit 2 ;;
esac
shift
echo "on-node: $("$bin/node" --version)" >&2
PATH="$bin:$PATH" "$@"
