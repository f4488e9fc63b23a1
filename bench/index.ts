// `pnpm bench`: every benchmark of the repository, in one run, printed as tables. Each module
// exports `run()` answering rows; where an issue names a baseline, the rows carry the ratio to it.
import * as core from "./core.ts"
import * as hostile from "./hostile.ts"
import * as http from "./http.ts"
import * as presign from "./presign.ts"
import * as s3 from "./s3.ts"

const suites: ReadonlyArray<readonly [string, { readonly run: () => Promise<ReadonlyArray<object>> }]> = [
  ["@mailroom/core on memory layers", core],
  ["@mailroom/http Node handler vs bare node:http (memory layers)", http],
  ["@mailroom/http peak memory on hostile bodies vs a server that only JSON.parses them", hostile],
  ["@mailroom/s3 presignPut vs getSignedUrl(client, new PutObjectCommand(...))", s3],
  ["Attachments.presign on S3 (s3rver) vs the adapter's signing alone", presign]
]

for (const [title, suite] of suites) {
  console.log(`\n${title}`)
  console.table(await suite.run())
}
