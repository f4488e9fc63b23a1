# Makes Node 24 and the pinned pnpm available, installing them from the npm registry into
# .toolchain/ when the machine lacks them. Source it (`. scripts/toolchain.sh`); it only touches PATH.

mailroom_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mailroom_toolchain="$mailroom_root/.toolchain"

mailroom_install() { # <prefix> <package spec>
  mkdir -p "$1"
  echo "toolchain: installing $2 into ${1#"$mailroom_root"/}" >&2
  npm install --prefix "$1" --no-save --no-audit --no-fund --no-package-lock --loglevel=error "$2" >&2
}

mailroom_node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if [ -x "$mailroom_toolchain/node/node_modules/.bin/node" ]; then
  PATH="$mailroom_toolchain/node/node_modules/.bin:$PATH"
fi
if [ "$(mailroom_node_major)" -lt 24 ]; then
  mailroom_install "$mailroom_toolchain/node" "node@24"
  PATH="$mailroom_toolchain/node/node_modules/.bin:$PATH"
fi

# The pnpm version is the one pinned in package.json's packageManager field.
mailroom_pnpm="$(node -p 'require(process.argv[1]).packageManager.split("@")[1].split("+")[0]' "$mailroom_root/package.json")"
if [ -x "$mailroom_toolchain/pnpm/node_modules/.bin/pnpm" ]; then
  PATH="$mailroom_toolchain/pnpm/node_modules/.bin:$PATH"
fi
if [ "$(pnpm --version 2>/dev/null)" != "$mailroom_pnpm" ]; then
  mailroom_install "$mailroom_toolchain/pnpm" "pnpm@$mailroom_pnpm"
  PATH="$mailroom_toolchain/pnpm/node_modules/.bin:$PATH"
fi
export PATH
unset -f mailroom_install mailroom_node_major
