// `pnpm bench`: every benchmark of the repository, in one run, printed as tables. Each module
// exports `run()` answering rows; where an issue names a baseline, the rows carry the ratio to it,
// measured in the same run (times are shown beside the ratios, never checked against a number).
import * as coldstart from "./coldstart.ts"
import * as core from "./core.ts"
import * as gcs from "./gcs.ts"
import * as hostile from "./hostile.ts"
import * as http from "./http.ts"
import * as memory from "./memory.ts"
import * as messages from "./messages.ts"
import * as outbox from "./outbox.ts"
import * as outboxServer from "./outboxServer.ts"
import * as outboxSize from "./outboxSize.ts"
import * as presign from "./presign.ts"
import * as presignHttp from "./presignHttp.ts"
import * as records from "./records.ts"
import * as s3 from "./s3.ts"
import * as scheduled from "./scheduled.ts"
import * as ses from "./ses.ts"
import * as smtp from "./smtp.ts"

// `pnpm bench ses outbox` runs only the suites named (by module name); without a name, all of them.
const suites: ReadonlyArray<readonly [string, string, { readonly run: () => Promise<ReadonlyArray<object>> }]> = [
  [
    "core",
    "@mailroom/core on memory layers, each beside a send with no attachment (7 interleaved rounds of 500)",
    core
  ],
  [
    "http",
    "@mailroom/http Node handler vs bare node:http making the same core calls (memory layers, 16 connections, 4 alternating rounds of 2 s)",
    http
  ],
  ["hostile", "@mailroom/http peak memory on hostile bodies vs a server that only JSON.parses them", hostile],
  [
    "s3",
    "@mailroom/s3 presignPut vs getSignedUrl(client, new PutObjectCommand(...)) (7 interleaved rounds of 1000)",
    s3
  ],
  [
    "presign",
    "Presign: Attachments.presign on S3 (s3rver) vs the store's own signing (9 interleaved rounds of 1000); POST /attachments/presign on the local store vs POST /emails to a provider that answers at once, same server (5 alternating rounds of 2 s)",
    presign
  ],
  [
    "presignHttp",
    "POST /attachments/presign through the Node handler: the S3 and GCS stores' own signers vs the same stores presigning with their SDK's getSignedUrl (7 interleaved rounds of 200)",
    presignHttp
  ],
  [
    "ses",
    "Send overhead, on one SES emulator (15 interleaved rounds of 60): Mailer.send (SES adapter) in process vs SESv2Client.send; POST /emails through @mailroom/http vs the floor, a bare node:http server parsing the body and making the same SendEmail call",
    ses
  ],
  [
    "smtp",
    "SMTP throughput: SmtpEmailProvider.send vs nodemailer's pooled transport used directly, to one smtp-server (5 connections, 7 interleaved rounds of 4 batches of 50)",
    smtp
  ],
  [
    "gcs",
    "GCS presign vs one RSA-2048 signature with a reused KeyObject, and the SDK's getSignedUrl (7 interleaved rounds of 300)",
    gcs
  ],
  [
    "outbox",
    "Outbox: OutboxEmailProvider.send vs one fsync'd .eml, and the former outbox's writes (5 interleaved rounds of 100)",
    outbox
  ],
  [
    "outboxServer",
    "Outbox throughput: POST /emails to the server on its embedded defaults (outbox, local storage, SQLite message log) vs a bare node:http server composing with MailComposer and writing one fdatasync'd .eml, at 1, 16 and 64 connections (5 alternating rounds of 2 s each)",
    outboxServer
  ],
  [
    "messages",
    "GET /emails at scale: MessageLog.list({ limit: 100 }) of @mailroom/sql over 1,000,000 records vs 1,000, PostgreSQL and SQLite (7 interleaved rounds of 30)",
    messages
  ],
  [
    "outboxSize",
    "Send rate vs the outbox's size: POST /emails, 16 at a time, to the built server with 100,000 messages in its outbox vs an empty one, viewer on and nobody looking (5 interleaved rounds of 150 bursts); then each one's CPU while idle",
    outboxSize
  ],
  [
    "records",
    'What a send pays for its record: POST /emails on the server (bin.js, the outbox) with the default SQLite message log vs "messages": {"kind": "memory"}, at c=1 (9 interleaved rounds of 100) and c=16 (autocannon, 5 alternating rounds of 3 s)',
    records
  ],
  [
    "scheduled",
    "Sending later and many: the drain of due scheduled messages into the outbox vs direct POST /emails (SQLite, one instance; PostgreSQL, three), 5 interleaved rounds of 300; one POST /emails/batch of 100 vs 100 single sends over 16 connections",
    scheduled
  ],
  [
    "memory",
    "Memory of large sends: peak RSS over idle of the built server for 10 sends at once with a 7 MB stored attachment each, over the attachment bytes, through the outbox and through SES (emulator); then, beside what each declares it holds, Postmark and Resend (stand-ins) and SMTP (smtp-server)",
    memory
  ],
  [
    "coldstart",
    'Cold start: the server\'s bin.js on the embedded defaults (SQLite message log included) until its first 200 on /readyz vs import("effect") then node:http (10 alternating runs)',
    coldstart
  ]
]

const wanted = process.argv.slice(2)
const unknown = wanted.filter((name) => !suites.some(([key]) => key === name))
if (unknown.length > 0) {
  throw new Error(`no suite named ${unknown.join(", ")}; the suites: ${suites.map(([key]) => key).join(", ")}`)
}

for (const [key, title, suite] of suites) {
  if (wanted.length > 0 && !wanted.includes(key)) continue
  console.log(`\n${title}`)
  console.table(await suite.run())
}

// Every suite stops what it started; one that left a handle open (a server, a socket, a child) would
// keep `pnpm bench` running after its last table, as a run of all the suites once did: name what is
// left (Node's list of handles, less this process's own stdio), so the suite can be mended, and end.
const { _getActiveHandles } = process as unknown as { readonly _getActiveHandles: () => ReadonlyArray<object> }
const left = _getActiveHandles
  .call(process)
  .filter((handle) => handle !== process.stdout && handle !== process.stderr && handle !== process.stdin)
if (left.length > 0) {
  const counts = new Map<string, number>()
  for (const handle of left) counts.set(handle.constructor.name, (counts.get(handle.constructor.name) ?? 0) + 1)
  const named = [...counts].map(([name, n]) => `${n} ${name}`).join(", ")
  console.warn(`bench: still open after the last suite (${named}); ended by exiting`)
}
process.exit(0)
