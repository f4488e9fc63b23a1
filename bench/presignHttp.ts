// The signers at request level (issue 32): POST /attachments/presign through @mailroom/http's Node
// handler, on the S3 and GCS stores as they are, against the same stores presigning with their SDK's
// getSignedUrl, so a fast path's gain is read where a caller meets it. Rounds interleaved.
import { generateKeyPairSync } from "node:crypto"
import { Agent, createServer, request as httpRequest } from "node:http"
import type { AddressInfo } from "node:net"
import { PutObjectCommand, S3Client } from "@aws-sdk/client-s3"
import { getSignedUrl } from "@aws-sdk/s3-request-presigner"
import { Storage } from "@google-cloud/storage"
import { EmailProvider, Mailroom, ObjectStore, Organizations } from "@mailroom/core"
import { GcsObjectStore } from "@mailroom/gcs"
import { MailroomHandler } from "@mailroom/http"
import { S3ObjectStore } from "@mailroom/s3"
import { Effect, Layer, Redacted } from "effect"
import { GoogleAuth, JWT } from "google-auth-library"
import { compare, ratioRows } from "./compare.ts"

type Presign = (request: ObjectStore.PresignPutOptions) => Promise<string>

/** The store with its `presignPut` made by `presign` instead: the SDK's way, everything else its own. */
const presigningWith = (store: Layer.Layer<ObjectStore.ObjectStore, unknown>, presign: Presign) =>
  Layer.effect(
    ObjectStore.ObjectStore,
    Effect.map(ObjectStore.ObjectStore, (own) => ({
      ...own,
      presignPut: (request: ObjectStore.PresignPutOptions) => Effect.promise(() => presign(request))
    }))
  ).pipe(Layer.provide(store))

const agent = new Agent({ keepAlive: true, maxSockets: 50 })
const body = JSON.stringify({ filename: "report.pdf", content_type: "application/pdf" })

/** A handler on `store` listening on 127.0.0.1, and one presign request to it. */
const serve = async (store: Layer.Layer<ObjectStore.ObjectStore, unknown>) => {
  const handler = MailroomHandler.fromLayer(
    Mailroom.layer({
      provider: Layer.succeed(EmailProvider.EmailProvider, EmailProvider.makeMemory()),
      store,
      organizations: Organizations.layerStatic({
        serviceDomain: "mailroom.test",
        organizations: [{ id: "org_acme", slug: "acme", verifiedDomains: ["acme.example"], apiKeys: ["mr_bench"] }]
      })
    })
  )
  await handler.ready
  const server = createServer(handler.node)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/attachments/presign`)
  const presign = () =>
    new Promise<void>((resolve, reject) => {
      const headers = { "content-type": "application/json", "x-api-key": "mr_bench", "content-length": body.length }
      const request = httpRequest(url, { method: "POST", agent, headers }, (response) => {
        response.resume()
        response.on("end", () =>
          response.statusCode === 201 ? resolve() : reject(new Error(`${response.statusCode}`))
        )
      })
      request.on("error", reject)
      request.end(body)
    })
  return { presign, close: () => server.close() }
}

const s3 = () => {
  const bucket = "mailroom-attachments"
  const credentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" }
  const store = S3ObjectStore.layer({
    bucket,
    region: "eu-west-3",
    accessKeyId: credentials.accessKeyId,
    secretAccessKey: Redacted.make(credentials.secretAccessKey)
  })
  const client = new S3Client({ region: "eu-west-3", credentials, requestChecksumCalculation: "WHEN_REQUIRED" })
  return {
    store,
    sdk: presigningWith(store, (request) =>
      getSignedUrl(
        client,
        new PutObjectCommand({ Bucket: bucket, Key: request.key, ContentType: request.contentType }),
        {
          expiresIn: request.expiresIn,
          signableHeaders: new Set(["content-type"])
        }
      )
    )
  }
}

const gcs = () => {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
  const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString()
  const client_email = "mailroom-bench@demo-mailroom.iam.gserviceaccount.com"
  const bucket = "mailroom-attachments"
  const store = GcsObjectStore.layer({
    bucket,
    projectId: "demo-mailroom",
    credentials: { client_email, private_key: pem }
  })
  const scopes = ["https://www.googleapis.com/auth/devstorage.full_control"]
  const auth = new GoogleAuth({ authClient: new JWT({ email: client_email, key: pem, scopes }), scopes })
  auth.jsonContent = { client_email, private_key: pem }
  const files = new Storage({ projectId: "demo-mailroom", authClient: auth }).bucket(bucket)
  return {
    store,
    sdk: presigningWith(store, (request) =>
      files
        .file(request.key)
        .getSignedUrl({
          version: "v4",
          action: "write",
          contentType: request.contentType,
          expires: Date.now() + request.expiresIn * 1000
        })
        .then(([url]) => url)
    )
  }
}

export const run = async (): Promise<ReadonlyArray<object>> => {
  const rows: Array<object> = []
  for (const [name, make] of [
    ["S3 (SignatureV4 direct)", s3],
    ["GCS (in-process signer)", gcs]
  ] as const) {
    const { store, sdk } = make()
    const own = await serve(store)
    const theirs = await serve(sdk)
    const contenders = [
      { name: `POST /attachments/presign, ${name}`, run: own.presign },
      { name: "the same store presigning with its SDK's getSignedUrl", run: theirs.presign }
    ]
    rows.push(...ratioRows(await compare(contenders, { rounds: 7, perRound: 200 }), contenders))
    own.close()
    theirs.close()
  }
  agent.destroy()
  return rows
}
