// A typed client for mailroom generated from the service's own GET /openapi.json: `pnpm generate`
// writes api.d.ts with openapi-typescript, and openapi-fetch calls the API with those types.
import createClient from "openapi-fetch"
import type { components, paths } from "./api.js"

type Schemas = components["schemas"]

export const makeClient = (baseUrl: string) => createClient<paths>({ baseUrl })

export type Client = ReturnType<typeof makeClient>

/** Uploads a file, sends it attached, and answers what each step returned. */
export const sendWithAttachment = async (
  client: Client,
  apiKey: string,
  file: { readonly name: string; readonly type: string; readonly bytes: Uint8Array<ArrayBuffer> }
): Promise<{
  readonly presigned: Schemas["PresignResponse"]
  readonly uploadBy: Date
  readonly sent: Schemas["SendEmailResponse"]
  readonly download: Schemas["DownloadResponse"]
}> => {
  const headers = { "x-api-key": apiKey }
  const presigned = await client.POST("/attachments/presign", {
    headers,
    body: { filename: file.name, content_type: file.type, content_length: file.bytes.byteLength }
  })
  if (presigned.data === undefined) throw new Error(`presign: ${JSON.stringify(presigned.error)}`)
  // expires_in is an integer number of seconds: plain arithmetic, no string case to handle.
  const uploadBy = new Date(Date.now() + presigned.data.expires_in * 1000)
  const upload = await fetch(presigned.data.url, {
    method: "PUT",
    headers: { "content-type": file.type },
    body: file.bytes
  })
  if (!upload.ok) throw new Error(`upload: ${upload.status}`)
  const sent = await client.POST("/emails", {
    headers,
    body: {
      from: "billing@acme.example",
      from_name: "Acme Billing",
      to: ["alice@example.com"],
      subject: "Your invoice",
      body: { text: "Attached." },
      attachments: [{ filename: file.name, key: presigned.data.key, content_type: file.type }]
    }
  })
  // 201 when sent, 202 when scheduled (`scheduled_at`): this request is sent now.
  if (sent.data === undefined || !("from" in sent.data)) throw new Error(`send: ${JSON.stringify(sent.error)}`)
  const download = await client.GET("/attachments/download", {
    headers,
    params: { query: { key: presigned.data.key } }
  })
  if (download.data === undefined) throw new Error(`download: ${JSON.stringify(download.error)}`)
  return { presigned: presigned.data, uploadBy, sent: sent.data, download: download.data }
}

/** The problems the service lists for a send it refuses, typed as the document gives them. */
export const refusedSend = async (client: Client, apiKey: string) => {
  const { error, response } = await client.POST("/emails", {
    headers: { "x-api-key": apiKey },
    body: { from: "billing@acme.example", to: [], subject: "Hi", body: { text: "x" } }
  })
  return { status: response.status, errors: error !== undefined && "errors" in error ? error.errors : [] }
}

/** Deletes an attachment by id through the v1 variant. */
export const deleteById = async (client: Client, accessToken: string, attachmentId: string) => {
  const { data, error, response } = await client.DELETE("/v1/attachments", {
    headers: { authorization: `Bearer ${accessToken}` },
    body: { attachment_id: attachmentId }
  })
  return { status: response.status, deleted: data?.deleted ?? false, message: error?.message }
}
