#!/usr/bin/env bash
# The workflow packages in their real runtimes: lint, scan and type-check of the n8n package, then headless
# Node-RED 5 and n8n 2.41.1 under Node 24 (test/workflow/), each with its packed tarball. The runtimes come from the
# cache that scripts/ci/runtimes.sh keeps outside the clone.
set -euo pipefail
cd "$(dirname "$0")/../.."
eval "$(scripts/ci/runtimes.sh)"
export NODE24 NODE26 NODE_RED N8N N8N_USER_SEED N8N_TOOLS
# .ci/run has built already (CHAINMAIL_CI_BUILT=1): a build costs the better part of a minute.
[ -n "${CHAINMAIL_CI_BUILT:-}" ] || npm run build --silent

# n8n's own checks, with the tools the runtimes cache holds (n8n-workflow for the types, @n8n/node-cli, the scanner).
pkg=packages/n8n-nodes-chainmail
ln -sfn "$N8N_TOOLS/node_modules" "$pkg/node_modules"
(cd "$pkg" && PATH="$NODE24:$PATH" ./node_modules/.bin/tsc -p tsconfig.json)
(cd "$pkg" && PATH="$NODE24:$PATH" ./node_modules/.bin/n8n-node lint)
scan=$(mktemp -d)
(cd "$pkg" && npm pack --silent --pack-destination "$scan" >/dev/null)
mkdir "$scan/package" && tar -xzf "$scan"/*.tgz -C "$scan/package" --strip-components=1
PATH="$NODE24:$PATH" node scripts/ci/scan-n8n-package.mjs "$scan/package"
rm -rf "$scan"

npx vitest run --config vitest.workflow.config.ts
