// The client's calls for sending later and sending many: cancel and reschedule a scheduled message,
// and a batch of up to 100 under one Idempotency-Key, whose items are answered one by one.

import { ValidationError } from "../MailroomApiError.js"
import type { Emails, RequestOptions, SendBatchResult, SendOptions } from "../MailroomClient.js"
import type { Call } from "./records.js"
import type * as Wire from "./wire.js"

export interface Dependencies {
  readonly baseUrl: string
  readonly call: Call
  readonly withApiKey: (what: string) => Record<string, string>
}

/** The 400 of a batch none of whose items was accepted: an answer to read, not a failure of the call. */
const isBatchAnswer = (body: unknown): body is Wire.SendBatchResponse =>
  typeof body === "object" && body !== null && Array.isArray((body as { data?: unknown }).data)

export const make = ({ baseUrl, call, withApiKey }: Dependencies) => {
  const emailUrl = (id: string) => `${baseUrl}/emails/${encodeURIComponent(id)}`

  const cancel: Emails["cancel"] = async (id, options: RequestOptions = {}) =>
    (await call<Wire.CancelResponse>("POST", `${emailUrl(id)}/cancel`, withApiKey("emails.cancel"), undefined, options))
      .value

  const reschedule: Emails["reschedule"] = async (id, scheduledAt, options: RequestOptions = {}) => {
    const body: Wire.RescheduleRequest = {
      scheduled_at: scheduledAt instanceof Date ? scheduledAt.toISOString() : scheduledAt
    }
    return (
      await call<Wire.ScheduledEmailResponse>("PATCH", emailUrl(id), withApiKey("emails.reschedule"), body, options)
    ).value
  }

  const sendBatch: Emails["sendBatch"] = async (requests, options: SendOptions = {}): Promise<SendBatchResult> => {
    const idempotencyKey = options.idempotencyKey ?? crypto.randomUUID()
    const headers = { ...withApiKey("emails.sendBatch"), "idempotency-key": idempotencyKey }
    try {
      const answer = await call<Wire.SendBatchResponse>("POST", `${baseUrl}/emails/batch`, headers, requests, options)
      return { ...answer.value, replayed: answer.headers.get("idempotent-replayed") === "true", idempotencyKey }
    } catch (error) {
      if (ValidationError.isInstance(error) && isBatchAnswer(error.body)) {
        return { data: error.body.data, errors: error.body.errors, replayed: false, idempotencyKey }
      }
      throw error
    }
  }

  return { cancel, reschedule, sendBatch }
}
