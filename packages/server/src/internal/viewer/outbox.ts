// One message of the outbox as the viewer shows it: its `.eml` parsed (inline `cid:` images made data
// URLs, so the HTML shows them without the network) with its blind copies. Lists, searches
// and changes go through the inbox's index; this reads one file, on demand.
import { readFile } from "node:fs/promises"
import * as path from "node:path"
import type { AddressObject, ParsedMail } from "mailparser"
import { blindCopies, isMessageId } from "../inbox/message.js"
import { bodyParts } from "./parts.js"

export interface Message {
  readonly id: string
  readonly organization: string
  readonly raw: Buffer
  readonly parsed: ParsedMail
  /** From the outbox's X-Mailroom-Bcc header (a `.json` sidecar for files of earlier versions): never a Bcc header. */
  readonly bcc: ReadonlyArray<string>
  /** The body parts the message has, whatever mailparser derived. */
  readonly parts: { readonly text: boolean; readonly html: boolean }
}

export const addresses = (value: AddressObject | ReadonlyArray<AddressObject> | undefined): string =>
  (value === undefined ? [] : Array.isArray(value) ? value : [value as AddressObject]).map((a) => a.text).join(", ")

/** `{dir}/{id}.eml` parsed; undefined when it is not there or not a message mailparser can read. */
export const read = async (dir: string, id: string): Promise<Message | undefined> => {
  if (!isMessageId(id)) return undefined
  let raw: Buffer
  try {
    raw = await readFile(path.join(dir, `${id}.eml`))
  } catch {
    return undefined
  }
  let parsed: ParsedMail
  try {
    // Imported on first use: a server whose viewer is never opened does not load a MIME parser.
    const { simpleParser } = await import("mailparser")
    parsed = await simpleParser(raw)
  } catch {
    return undefined
  }
  const organization = parsed.headers.get("x-mailroom-organization")
  return {
    id,
    organization: typeof organization === "string" ? organization : "",
    raw,
    parsed,
    bcc: await blindCopies(parsed, path.join(dir, `${id}.json`)),
    parts: bodyParts(raw)
  }
}
