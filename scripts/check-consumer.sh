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
  # Its own copy, so that any packer (npm pack, npm publish) ships it, not only pnpm's fallback to the root's.
  cmp -s "${dir}LICENSE" LICENSE || { echo "${dir}LICENSE: missing, or not the root one" >&2; exit 1; }
  (cd "$dir" && pnpm pack --pack-destination "$work/packs" >/dev/null)
  names+=("@mailroom/$(basename "$dir")")
done
# The subpaths adapter authors import (core/testing needs vitest, which a consumer may not have), and
# the Fastify plugin's, which loads nothing of fastify at run time (an optional peer).
names+=("@mailroom/core/adapter" "@mailroom/http/StoreRoutes" "@mailroom/http/fastify")
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

# The lowest Node.js each package supports (the first version its `engines` names), from the same
# tarballs: imported on it, the server started on it and sent to with the client on its own lowest.
node_at() { # <version>: the path of a Node.js of exactly that version, from the npm registry's `node` package
  npm install --prefix "$work/node-$1" --no-save --no-audit --no-fund --no-package-lock --loglevel=error "node@$1" >&2
  echo "$work/node-$1/node_modules/.bin/node"
}
lowest() { # <package>: the first version its engines name, as x.y.z
  node -p 'const v = require(process.argv[1]).engines.node.match(/\d+(\.\d+){0,2}/)[0].split("."); [0, 1, 2].map((i) => v[i] ?? "0").join(".")' "$mailroom_root/packages/$1/package.json"
}
floor="$(lowest server)"
for name in core http local ses postmark s3 gcs postgres redis; do
  [ "$(lowest "$name")" = "$floor" ] || { echo "@mailroom/$name's lowest Node ($(lowest "$name")) is not the server's ($floor): give it its own check here" >&2; exit 1; }
done
node_floor="$(node_at "$floor")"
node_client="$(node_at "$(lowest client)")"
node_sqlite="$(node_at "$(lowest sqlite)")"
"$node_floor" check.ts
mkdir smoke
cat > smoke/mailroom.config.json <<'JSON'
{ "serviceDomain": "mailroom.test",
  "organizations": [{ "id": "org_acme", "slug": "acme", "verifiedDomains": ["acme.example"], "apiKeys": ["mr_smoke"] }],
  "storage": { "kind": "local", "dir": "storage", "signingSecret": "smoke-secret" },
  "provider": { "kind": "outbox", "dir": "outbox" } }
JSON
MAILROOM_CONFIG=smoke/mailroom.config.json PORT=0 "$node_floor" node_modules/@mailroom/server/dist/bin.js > smoke/server.log 2>&1 &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 200); do grep -q "listening on" smoke/server.log && break; kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
url="$(grep -o 'listening on http://[^ ]*' smoke/server.log | cut -d' ' -f3)"
[ -n "$url" ] || { echo "the server did not start on Node $floor:" >&2; cat smoke/server.log >&2; exit 1; }
cat > smoke/client.mjs <<'JS'
import { MailroomClient } from "@mailroom/client"
const mailroom = MailroomClient.make({ baseUrl: process.argv[2], apiKey: "mr_smoke" })
const data = new TextEncoder().encode("smoke")
const { key } = await mailroom.attachments.upload({ filename: "smoke.txt", contentType: "text/plain", data })
const sent = await mailroom.emails.send({
  from: "smoke@acme.example", to: ["alice@example.com"], subject: "Smoke", body: { text: "Attached." },
  attachments: [{ filename: "smoke.txt", key }]
})
console.log(sent.message_id)
JS
message_id="$("$node_client" smoke/client.mjs "$url")"
[ -f "smoke/outbox/$message_id.eml" ] || { echo "no smoke/outbox/$message_id.eml" >&2; exit 1; }
kill "$server_pid"
wait "$server_pid" 2>/dev/null || true
echo "the server ran on Node $floor, the client on Node $(lowest client): message $message_id sent"
cat > sqlite.mjs <<'JS'
import { SqliteClient } from "@mailroom/sqlite"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
const query = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT sqlite_version() AS version`)
const [row] = await Effect.runPromise(query.pipe(Effect.provide(SqliteClient.layer({ filename: ":memory:" }))))
console.log(`@mailroom/sqlite ran a query on Node ${process.version}, SQLite ${row.version}`)
JS
"$node_sqlite" sqlite.mjs
