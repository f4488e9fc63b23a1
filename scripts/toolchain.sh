# Makes Node 24 and the pinned pnpm available, installing them from the npm registry into
# .toolchain/ when the machine lacks them. Source it (`. scripts/toolchain.sh`); it only touches PATH.

mailroom_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mailroom_toolchain="$mailroom_root/.toolchain"

# Each install goes into a directory of its own, then is renamed into place: two installs at once (`npm
# start` and `npm run quickstart` on a fresh clone) never write where the other is running node from
# ("Text file busy"), and an interrupted one leaves nothing half-installed in the prefix.
mailroom_install() { # <prefix> <package spec> <check: succeeds for a prefix that holds what is needed>
  local tmp="$1.tmp.$$" stale
  # What installs killed midway left behind (their process is gone).
  for stale in "$1".tmp.*; do [ -d "$stale" ] && ! kill -0 "${stale##*.}" 2>/dev/null && rm -rf "$stale"; done
  mkdir -p "$tmp"
  echo "toolchain: installing $2 into ${1#"$mailroom_root"/}" >&2
  if ! npm install --prefix "$tmp" --no-save --no-audit --no-fund --no-package-lock --loglevel=error "$2" >&2; then
    rm -rf "$tmp"
    return 1
  fi
  # Another install finished first: keep that one, which its process may already be running.
  if "$3" "$1"; then
    rm -rf "$tmp"
    return 0
  fi
  # An older install is moved aside (a process may still run from it), then ours takes its name.
  if [ -e "$1" ]; then mv "$1" "$1.old.$$"; fi
  mv "$tmp" "$1"
  # Another install took the name between those two steps: mv put ours inside it, so drop ours.
  rm -rf "$1/$(basename "$tmp")" "$1.old.$$"
}

mailroom_node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
mailroom_node_ready() { [ "$(PATH="$1/node_modules/.bin:$PATH" mailroom_node_major)" -ge 24 ]; }

if [ -x "$mailroom_toolchain/node/node_modules/.bin/node" ]; then
  PATH="$mailroom_toolchain/node/node_modules/.bin:$PATH"
fi
if [ "$(mailroom_node_major)" -lt 24 ]; then
  mailroom_install "$mailroom_toolchain/node" "node@24" mailroom_node_ready
  PATH="$mailroom_toolchain/node/node_modules/.bin:$PATH"
fi

# The pnpm version is the one pinned in package.json's packageManager field.
mailroom_pnpm="$(node -p 'require(process.argv[1]).packageManager.split("@")[1].split("+")[0]' "$mailroom_root/package.json")"
if [ -x "$mailroom_toolchain/pnpm/node_modules/.bin/pnpm" ]; then
  PATH="$mailroom_toolchain/pnpm/node_modules/.bin:$PATH"
fi
mailroom_pnpm_ready() { [ "$("$1/node_modules/.bin/pnpm" --version 2>/dev/null)" = "$mailroom_pnpm" ]; }
if [ "$(pnpm --version 2>/dev/null)" != "$mailroom_pnpm" ]; then
  mailroom_install "$mailroom_toolchain/pnpm" "pnpm@$mailroom_pnpm" mailroom_pnpm_ready
  PATH="$mailroom_toolchain/pnpm/node_modules/.bin:$PATH"
fi
export PATH
unset -f mailroom_install mailroom_node_major mailroom_node_ready mailroom_pnpm_ready
