// The rules that keep one organisation out of another's files, in one place for every service:
// Attachments (presign, download, delete) and Mailer (attachments sent by key) ask only these.
import * as Effect from "effect/Effect"
import { Forbidden } from "../MailroomError.js"
import type { Principal } from "../Organizations.js"
import * as AttachmentKey from "./attachmentKey.js"

/**
 * True when `key` is an attachment key of this organisation: `attachments/{orgId}/{timestamp}-{name}`,
 * one segment after the prefix (which also keeps any other object under the prefix out of reach by key).
 */
export const isOwnKey = (principal: Principal, key: string): boolean => AttachmentKey.isOwnKey(principal.orgId, key)

/** An `org_id` in a request body may only name the caller's own organisation. */
export const orgIdRefusal = (principal: Principal, orgId: string | undefined): Forbidden | undefined =>
  orgId === undefined || orgId === principal.orgId
    ? undefined
    : new Forbidden({ message: "org_id is not the organization of this credential" })

/** As `orgIdRefusal`, as an effect. */
export const checkOrgId = (principal: Principal, orgId: string | undefined): Effect.Effect<void, Forbidden> => {
  const refused = orgIdRefusal(principal, orgId)
  return refused === undefined ? Effect.void : Effect.fail(refused)
}
