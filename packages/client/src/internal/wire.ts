// The bodies of the HTTP API as plain types, so the client depends on nothing at run time or for
// types. test/wire.test.ts checks each is exactly core's wire schema type, so they cannot drift.

export interface EmailAttachment {
  readonly filename: string
  readonly key: string
  readonly content_type?: string
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
}

export interface SendEmailResponse {
  readonly message_id: string
  readonly from: string
  readonly to: ReadonlyArray<string>
  readonly subject: string
  readonly attachments: ReadonlyArray<string>
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
