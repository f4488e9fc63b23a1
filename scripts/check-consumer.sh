#!/usr/bin/env bash
# Packs every package as it would be published and imports each one from a project outside the
# workspace, with npm, both at run time and with TypeScript: what a user installing them gets.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
cd "$mailroom_root"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
names=()
for dir in packages/*/; do
  # A private package (test-support) is never published.
  [ "$(node -p "require('./${dir}package.json').private === true")" = true ] && continue
  (cd "$dir" && pnpm pack --pack-destination "$work/packs" >/dev/null)
  names+=("@mailroom/$(basename "$dir")")
done
# The subpaths adapter authors import (core/testing needs vitest, which a consumer may not have).
names+=("@mailroom/core/adapter" "@mailroom/http/StoreRoutes")
# Each tarball carries the licence, the same text as the repository's.
for pack in "$work"/packs/*.tgz; do
  tar -xOzf "$pack" package/LICENSE | cmp -s - LICENSE || { echo "$(basename "$pack"): no LICENSE, or not the root one" >&2; exit 1; }
done
cd "$work"
echo '{ "name": "consumer", "private": true, "type": "module" }' > package.json
npm install --no-audit --no-fund --loglevel=error ./packs/*.tgz effect@^4.1.0 @types/node@^24 >/dev/null
{
  for name in "${names[@]}"; do echo "import * as m$((i = ${i:-0} + 1)) from \"$name\""; done
  i=0
  echo "const modules = [$(for name in "${names[@]}"; do printf 'm%s, ' "$((i = i + 1))"; done)]"
  echo 'for (const m of modules) if (Object.keys(m).length === 0) throw new Error("an entry point exports nothing")'
  echo 'console.log(`imported ${modules.length} entry points from the published tarballs`)'
} > check.ts
node check.ts
# @mailroom/sqlite reaches node:sqlite only at run time: open a database from the tarball and query it.
cat > sqlite.ts <<'TS'
import { SqliteClient } from "@mailroom/sqlite"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
const query = Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ version: string }>`SELECT sqlite_version() AS version`)
const [row] = await Effect.runPromise(query.pipe(Effect.provide(SqliteClient.layer({ filename: ":memory:" }))))
console.log(`@mailroom/sqlite ran a query on SQLite ${row?.version}`)
TS
node sqlite.ts
# @mailroom/sql migrates and writes through the published client: a record in and back out.
cat > sql.ts <<'TS'
import { MessageLog } from "@mailroom/core"
import { SqlMessageLog } from "@mailroom/sql"
import { SqliteClient } from "@mailroom/sqlite"
import { Effect, Layer } from "effect"
const id = MessageLog.makeId()
const program = Effect.gen(function* () {
  const log = yield* MessageLog.MessageLog
  yield* log.accept({ id, organizationId: "org_acme", createdAt: new Date().toISOString(), from: "a@acme.example",
    subject: "hi", recipients: [{ email: "b@example.com", kind: "to", state: "sending" }], tags: [], attachments: [],
    htmlBytes: 0, textBytes: 2 })
  return yield* log.find("org_acme", id)
})
const layer = SqlMessageLog.layer().pipe(Layer.provide(SqliteClient.layer({ filename: ":memory:" })))
const record = await Effect.runPromise(program.pipe(Effect.provide(layer)))
if (record?.status !== "sending") throw new Error("@mailroom/sql did not read back its record")
console.log("@mailroom/sql wrote a record on SQLite and read it back")
TS
node sql.ts
cat > tsconfig.json <<'JSON'
{ "compilerOptions": { "module": "NodeNext", "moduleResolution": "NodeNext", "strict": true,
  "exactOptionalPropertyTypes": true, "noEmit": true, "skipLibCheck": true, "types": ["node"],
  "allowImportingTsExtensions": true, "lib": ["ES2023", "DOM"] }, "files": ["check.ts", "sqlite.ts", "sql.ts"] }
JSON
"$mailroom_root/node_modules/.bin/tsc" -p tsconfig.json
echo "and their type declarations check"
