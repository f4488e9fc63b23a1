// `pnpm bench`: every benchmark of the repository, in one run, printed as tables. Each module
// exports `run()` answering rows; where an issue names a baseline, the rows carry the ratio to it,
// measured in the same run (times are shown beside the ratios, never checked against a number).
import * as coldstart from "./coldstart.ts"
import * as core from "./core.ts"
import * as gcs from "./gcs.ts"
import * as hostile from "./hostile.ts"
import * as http from "./http.ts"
import * as outbox from "./outbox.ts"
import * as presign from "./presign.ts"
import * as s3 from "./s3.ts"
import * as ses from "./ses.ts"

const suites: ReadonlyArray<readonly [string, { readonly run: () => Promise<ReadonlyArray<object>> }]> = [
  ["@mailroom/core on memory layers", core],
  ["@mailroom/http Node handler vs bare node:http (memory layers)", http],
  ["@mailroom/http peak memory on hostile bodies vs a server that only JSON.parses them", hostile],
  ["@mailroom/s3 presignPut vs getSignedUrl(client, new PutObjectCommand(...))", s3],
  ["Attachments.presign on S3 (s3rver) vs the adapter's signing alone", presign],
  [
    "Send overhead: Mailer.send (SES adapter) in process and POST /emails through @mailroom/http, vs SESv2Client.send, on one SES emulator (5 interleaved rounds of 200)",
    ses
  ],
  [
    "GCS presign vs one RSA-2048 signature with a reused KeyObject, and the SDK's getSignedUrl (7 interleaved rounds of 300)",
    gcs
  ],
  [
    "Outbox: OutboxEmailProvider.send vs one fsync'd .eml, and the former outbox's writes (5 interleaved rounds of 100)",
    outbox
  ],
  [
    'Cold start: the server\'s bin.js on the embedded defaults vs import("effect") on node:http (7 alternating runs)',
    coldstart
  ]
]

for (const [title, suite] of suites) {
  console.log(`\n${title}`)
  console.table(await suite.run())
}
