// The bodies of the HTTP API as plain types, so the client depends on nothing at run time or for
// types. test/wire.test.ts checks each is exactly core's wire schema type, so they cannot drift.

export interface EmailAttachment {
  readonly filename: string
  readonly key: string
  readonly content_type?: string
  /** Makes the file an inline part the HTML shows as `cid:{content_id}`. */
  readonly content_id?: string
}

/** A tag of the message: ASCII letters, digits, `_` and `-`, at most 256 characters each. */
export interface EmailTag {
  readonly name: string
  readonly value: string
}

export interface SendEmailRequest {
  readonly from: string
  readonly from_name?: string
  readonly to: ReadonlyArray<string>
  readonly cc?: ReadonlyArray<string>
  readonly bcc?: ReadonlyArray<string>
  readonly reply_to?: ReadonlyArray<string>
  readonly subject: string
  readonly body: { readonly html?: string; readonly text?: string }
  readonly attachments?: ReadonlyArray<EmailAttachment>
  /** At most 10; stored with the message and carried on its events. */
  readonly tags?: ReadonlyArray<EmailTag>
  /** Custom headers; the ones mailroom writes itself (From, Subject, Content-*...) are refused. */
  readonly headers?: { readonly [name: string]: string }
  /** RFC 8058 one-click unsubscribe: `List-Unsubscribe` and `List-Unsubscribe-Post`. */
  readonly unsubscribe?: { readonly url: string; readonly mailto?: string }
}

export interface SendEmailResponse {
  readonly message_id: string
  readonly from: string
  readonly to: ReadonlyArray<string>
  readonly subject: string
  readonly attachments: ReadonlyArray<string>
  /** The recipients dropped because they are suppressed; absent when none was. */
  readonly suppressed?: ReadonlyArray<string>
}

export interface PresignRequest {
  readonly filename: string
  readonly content_type?: string
  readonly org_id?: string
  readonly content_length?: number
}

export interface PresignResponse {
  readonly url: string
  readonly key: string
  readonly expires_in: number
  readonly attachment_id: string
}

export interface DownloadResponse {
  readonly download_url: string
  readonly expires_in: number
}

export interface DeleteByKeyResponse {
  readonly deleted: boolean
  readonly key: string
}

export interface DeleteByIdResponse {
  readonly deleted: boolean
  readonly attachment_id: string
}
