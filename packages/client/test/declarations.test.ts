// The client's published declarations as a project without Node's types compiles them (an edge or
// browser backend, or any project with skipLibCheck off): they name nothing but the web's own types.
import { execFile } from "node:child_process"
import { cp, mkdir, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { type TempDir, tempDir } from "@mailroom/test-support"
import { afterAll, assert, beforeAll, describe, it } from "vitest"

const run = promisify(execFile)
const client = fileURLToPath(new URL("..", import.meta.url))
const tsc = fileURLToPath(new URL("../../../node_modules/.bin/tsc", import.meta.url))

/** tsc's output, or its errors when it fails. */
const compile = async (args: ReadonlyArray<string>, cwd: string) => {
  try {
    return (await run(tsc, [...args], { cwd })).stdout
  } catch (error) {
    return (error as { readonly stdout?: string }).stdout ?? String(error)
  }
}

describe("the client's declarations, as a user's project compiles them", () => {
  let dir: TempDir
  /** tsc's errors for a user's module of these lines, each line its own; empty when it compiles. */
  const check = async (lines: ReadonlyArray<string>) => {
    const given = [
      'import { MailroomClient } from "@mailroom/client"',
      'const mailroom = MailroomClient.make({ baseUrl: "https://mail.example.com", apiKey: "mr_live" })',
      'const message = { from: "a@acme.example", to: ["b@example.com"], subject: "Hi", body: { text: "Hi" } } as const'
    ]
    await writeFile(join(dir.path, "user.ts"), [...given, ...lines, "export {}"].join("\n"))
    return compile(["-p", "tsconfig.json"], dir.path)
  }
  beforeAll(async () => {
    dir = await tempDir("client-declarations")
    const installed = join(dir.path, "node_modules", "@mailroom", "client")
    await mkdir(installed, { recursive: true })
    await cp(join(client, "package.json"), join(installed, "package.json"))
    // Built as the package script builds them, into what a user's install would hold.
    const build = ["-p", join(client, "tsconfig.build.json"), "--emitDeclarationOnly", "--declarationMap", "false"]
    assert.strictEqual(await compile([...build, "--outDir", join(installed, "dist")], client), "")
    // No Node types and no skipLibCheck, as an edge or browser backend compiles.
    const options = {
      target: "ES2023",
      lib: ["ES2023", "DOM"],
      module: "NodeNext",
      moduleResolution: "NodeNext",
      strict: true,
      noEmit: true,
      types: [],
      skipLibCheck: false
    }
    await writeFile(join(dir.path, "package.json"), JSON.stringify({ type: "module" }))
    await writeFile(join(dir.path, "tsconfig.json"), JSON.stringify({ compilerOptions: options, files: ["user.ts"] }))
  }, 60_000)
  afterAll(async () => {
    await dir?.remove()
  })

  it("type-check without @types/node and without skipLibCheck", async () => {
    const lines = [
      'import { ServiceUnavailableError, ValidationError } from "@mailroom/client"',
      "const sent = await mailroom.emails.send(message)",
      "export const id: string = sent.message_id",
      "export const unavailable = (e: unknown) => ServiceUnavailableError.isInstance(e) && e.mayHaveBeenSent",
      "export const invalid = (e: unknown) => (ValidationError.isInstance(e) ? e.errors : [])"
    ]
    assert.strictEqual(await check(lines), "")
  })

  it("an AttachmentRef of either kind is taken by download, read and delete", async () => {
    const lines = [
      "declare const ref: MailroomClient.AttachmentRef",
      "await mailroom.attachments.download(ref)",
      "await mailroom.attachments.read(ref)",
      "const deleted = await mailroom.attachments.delete(ref)",
      "export const ok: boolean = deleted.deleted",
      'export const key: string = (await mailroom.attachments.delete({ key: "k" })).key',
      'export const id: string = (await mailroom.attachments.delete({ attachmentId: "att_1" })).attachment_id'
    ]
    assert.strictEqual(await check(lines), "")
  })

  it("send refuses a field the API does not know, as sendBatch does, and types its answer by scheduled_at", async () => {
    const lines = [
      "// @ts-expect-error: Resend's name; the API's is scheduled_at",
      'await mailroom.emails.send({ ...message, scheduledAt: "2030-01-01T00:00:00Z" })',
      "// @ts-expect-error: the API's is reply_to",
      'await mailroom.emails.send({ ...message, replyTo: ["c@example.com"] })',
      "// @ts-expect-error: as in a batch",
      'await mailroom.emails.sendBatch([{ ...message, replyTo: ["c@example.com"] }])',
      'const later = await mailroom.emails.send({ ...message, scheduled_at: "2030-01-01T00:00:00Z" })',
      'export const scheduled: "scheduled" = later.status',
      "export const now: ReadonlyArray<string> = (await mailroom.emails.send(message)).attachments",
      "declare const request: MailroomClient.SendEmailRequest",
      "const either = await mailroom.emails.send(request)",
      'export const which: string = "status" in either ? either.scheduled_at : either.subject'
    ]
    assert.strictEqual(await check(lines), "")
  })
})
