#!/usr/bin/env bash
# Runs a command with Node 24 and pnpm on PATH and the workspace installed, so that
# `npm start` / `npm test` work on a fresh clone whose machine has only an older Node and npm.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
cd "$mailroom_root"
# Install when node_modules is missing or older than the lockfile; otherwise start at once.
if [ ! -f node_modules/.modules.yaml ] || [ pnpm-lock.yaml -nt node_modules/.modules.yaml ]; then
  pnpm install --frozen-lockfile >&2
fi
exec "$@"
