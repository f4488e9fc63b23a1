// What a client of mailroom mounted under a path sees, the same for every framework's example: the
// document names the mounted paths, a file goes up through its signed URL and out with a send.
import assert from "node:assert/strict"

export interface MountedFlowOptions {
  /** Where the app serves mailroom, as clients call it: `http://127.0.0.1:3000/mail`, or the bare origin at the root. */
  readonly base: string
  readonly apiKey: string
  /** A sender on the organisation's verified domain. */
  readonly from: string
}

export interface MountedFlow {
  /** The signed upload URL the presign answered. */
  readonly uploadUrl: string
  readonly key: string
  readonly messageId: string
  /** `GET {base}/emails/{id}`'s body. */
  readonly record: { readonly id: string; readonly attachments: ReadonlyArray<{ readonly filename: string }> }
}

/** The file sent: bytes a text decoder or a JSON parser would not change. */
export const mountedFlowFile = "name,amount\r\nalice,1e400\r\n"

/**
 * The flow a client runs against mailroom at `base`: `/openapi.json` lists the paths under the mount;
 * presign, PUT to the signed URL (which points under `base`), send with the file, read the record back
 * (`GET /emails/{id}`), download through a signed URL. Asserts each answer; resolves with what it saw.
 */
export const mountedFlow = async (options: MountedFlowOptions): Promise<MountedFlow> => {
  const { base } = options
  const headers = { "x-api-key": options.apiKey, "content-type": "application/json" }

  const document = await fetch(`${base}/openapi.json`)
  assert.equal(document.status, 200)
  const { servers, paths } = (await document.json()) as {
    servers?: ReadonlyArray<{ url: string }>
    paths: Record<string, unknown>
  }
  // Where a generated client calls: the first server (the origin when none is listed), then the path.
  const server = servers?.[0]?.url ?? new URL(base).origin
  const called = Object.keys(paths).map((path) => `${server}${path}`)
  for (const path of ["/emails", "/emails/{id}", "/attachments/presign", "/v1/attachments/presign"]) {
    assert.ok(called.includes(`${base}${path}`), `/openapi.json leads to ${base}${path}: ${called.join(", ")}`)
  }

  const presign = await fetch(`${base}/attachments/presign`, {
    method: "POST",
    headers,
    body: JSON.stringify({ filename: "report.csv", content_type: "text/csv" })
  })
  assert.equal(presign.status, 201)
  const { url: uploadUrl, key } = (await presign.json()) as { url: string; key: string }
  assert.ok(uploadUrl.startsWith(`${base}/`), `the upload URL ${uploadUrl} points under ${base}`)
  const upload = await fetch(uploadUrl, {
    method: "PUT",
    headers: { "content-type": "text/csv" },
    body: mountedFlowFile
  })
  assert.equal(upload.status, 200, await upload.clone().text())

  const send = await fetch(`${base}/emails`, {
    method: "POST",
    headers,
    body: JSON.stringify({
      from: options.from,
      to: ["alice@example.com"],
      subject: "Your report",
      body: { text: "Attached." },
      attachments: [{ filename: "report.csv", key }]
    })
  })
  assert.equal(send.status, 201, await send.clone().text())
  const { message_id: messageId } = (await send.json()) as { message_id: string }

  const read = await fetch(`${base}/emails/${encodeURIComponent(messageId)}`, { headers })
  assert.equal(read.status, 200)
  const record = (await read.json()) as MountedFlow["record"]
  assert.equal(record.id, messageId)
  assert.deepEqual(
    record.attachments.map((a) => a.filename),
    ["report.csv"]
  )

  const download = await fetch(`${base}/attachments/download?key=${encodeURIComponent(key)}`, { headers })
  assert.equal(download.status, 200)
  const { download_url } = (await download.json()) as { download_url: string }
  assert.ok(download_url.startsWith(`${base}/`), `the download URL ${download_url} points under ${base}`)
  const fetched = await fetch(download_url)
  assert.equal(fetched.status, 200)
  assert.equal(await fetched.text(), mountedFlowFile)
  return { uploadUrl, key, messageId, record }
}
