// `pnpm bench`: every benchmark of the repository, in one run, printed as tables. Each module
// exports `run()` answering rows; where an issue names a baseline, the rows carry the ratio to it,
// measured in the same run (times are shown beside the ratios, never checked against a number).
import * as coldstart from "./coldstart.ts"
import * as core from "./core.ts"
import * as gcs from "./gcs.ts"
import * as hostile from "./hostile.ts"
import * as http from "./http.ts"
import * as messages from "./messages.ts"
import * as outbox from "./outbox.ts"
import * as outboxSize from "./outboxSize.ts"
import * as presign from "./presign.ts"
import * as presignHttp from "./presignHttp.ts"
import * as s3 from "./s3.ts"
import * as ses from "./ses.ts"
import * as smtp from "./smtp.ts"

// `pnpm bench ses outbox` runs only the suites named (by module name); without a name, all of them.
const suites: ReadonlyArray<readonly [string, string, { readonly run: () => Promise<ReadonlyArray<object>> }]> = [
  ["core", "@mailroom/core on memory layers", core],
  ["http", "@mailroom/http Node handler vs bare node:http (memory layers)", http],
  ["hostile", "@mailroom/http peak memory on hostile bodies vs a server that only JSON.parses them", hostile],
  ["s3", "@mailroom/s3 presignPut vs getSignedUrl(client, new PutObjectCommand(...))", s3],
  ["presign", "Attachments.presign on S3 (s3rver) vs the adapter's signing alone", presign],
  [
    "presignHttp",
    "POST /attachments/presign through the Node handler: the S3 and GCS stores' own signers vs the same stores presigning with their SDK's getSignedUrl (7 interleaved rounds of 200)",
    presignHttp
  ],
  [
    "ses",
    "Send overhead: Mailer.send (SES adapter) in process and POST /emails through @mailroom/http, vs SESv2Client.send, on one SES emulator (15 interleaved rounds of 60); over HTTP, the floor a bare node:http server reaches",
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
    "coldstart",
    'Cold start: the server\'s bin.js on the embedded defaults vs import("effect") on node:http (7 alternating runs)',
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
