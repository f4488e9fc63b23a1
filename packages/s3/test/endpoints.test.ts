import { GetObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3"
import { getSignedUrl } from "@aws-sdk/s3-request-presigner"
import { assert, describe, it } from "@effect/vitest"
import * as Adapter from "@mailroom/core/adapter"
import { Effect, Redacted } from "effect"
import { S3ObjectStore } from "../src/index.js"
import { refusal } from "./sigv4.js"

// Presigning is local, so these settings need no network: each case checks the URL the vendor
// documents, the URL the SDK's own endpoint rules build for the same settings, and the signature.
const account = "0123456789abcdef0123456789abcdef"
const credentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" }
const key = "attachments/org_acme/1767225600000-Relevé août (v2).pdf"
const encodedKey = "attachments/org_acme/1767225600000-Relev%C3%A9%20ao%C3%BBt%20%28v2%29.pdf"

interface Case {
  readonly name: string
  readonly settings: {
    readonly bucket: string
    readonly region: string
    readonly endpoint?: string
    readonly forcePathStyle?: boolean
  }
  /** Everything of the URL before the query. */
  readonly expected: string
}

const cases: ReadonlyArray<Case> = [
  {
    name: "AWS S3: virtual-hosted on the regional endpoint",
    settings: { bucket: "mailroom-attachments", region: "eu-west-3" },
    expected: `https://mailroom-attachments.s3.eu-west-3.amazonaws.com/${encodedKey}`
  },
  {
    name: "AWS S3 in us-east-1: regional, not the legacy global endpoint",
    settings: { bucket: "mailroom-attachments", region: "us-east-1" },
    expected: `https://mailroom-attachments.s3.us-east-1.amazonaws.com/${encodedKey}`
  },
  {
    name: "AWS S3 in China: the amazonaws.com.cn partition",
    settings: { bucket: "mailroom-attachments", region: "cn-north-1" },
    expected: `https://mailroom-attachments.s3.cn-north-1.amazonaws.com.cn/${encodedKey}`
  },
  {
    name: "AWS S3 with forcePathStyle",
    settings: { bucket: "mailroom-attachments", region: "eu-west-3", forcePathStyle: true },
    expected: `https://s3.eu-west-3.amazonaws.com/mailroom-attachments/${encodedKey}`
  },
  {
    name: "AWS S3 with a dotted bucket: path style, as TLS wildcards do not cover dots",
    settings: { bucket: "attachments.example.com", region: "eu-west-3" },
    expected: `https://s3.eu-west-3.amazonaws.com/attachments.example.com/${encodedKey}`
  },
  {
    name: "Cloudflare R2: account endpoint, region auto, bucket in the path",
    settings: {
      bucket: "mailroom-attachments",
      region: "auto",
      endpoint: `https://${account}.r2.cloudflarestorage.com`,
      forcePathStyle: true
    },
    expected: `https://${account}.r2.cloudflarestorage.com/mailroom-attachments/${encodedKey}`
  },
  {
    name: "Cloudflare R2 without forcePathStyle: bucket subdomain of the account endpoint",
    settings: {
      bucket: "mailroom-attachments",
      region: "auto",
      endpoint: `https://${account}.r2.cloudflarestorage.com`
    },
    expected: `https://mailroom-attachments.${account}.r2.cloudflarestorage.com/${encodedKey}`
  },
  {
    name: "MinIO: plain HTTP with a port, path style",
    settings: {
      bucket: "mailroom-attachments",
      region: "us-east-1",
      endpoint: "http://localhost:9000",
      forcePathStyle: true
    },
    expected: `http://localhost:9000/mailroom-attachments/${encodedKey}`
  },
  {
    name: "MinIO behind a reverse proxy path",
    settings: {
      bucket: "mailroom-attachments",
      region: "us-east-1",
      endpoint: "https://storage.example.com/minio/",
      forcePathStyle: true
    },
    expected: `https://storage.example.com/minio/mailroom-attachments/${encodedKey}`
  },
  {
    name: "an IP-address endpoint: path style even without forcePathStyle",
    settings: { bucket: "mailroom-attachments", region: "us-east-1", endpoint: "http://10.0.0.7:9000" },
    expected: `http://10.0.0.7:9000/mailroom-attachments/${encodedKey}`
  }
]

const withoutQuery = (url: string) => url.slice(0, url.indexOf("?"))

describe("S3ObjectStore presigned URLs per endpoint setting", () => {
  for (const { name, settings, expected } of cases) {
    it.live(name, () =>
      Effect.gen(function* () {
        const store = yield* S3ObjectStore.make({
          ...settings,
          accessKeyId: credentials.accessKeyId,
          secretAccessKey: Redacted.make(credentials.secretAccessKey)
        })
        const put = yield* store.presignPut({ key, contentType: "application/pdf", expiresIn: 3600 })
        const get = yield* store.presignGet({ key, expiresIn: 900 })
        assert.strictEqual(withoutQuery(put), expected)
        assert.strictEqual(withoutQuery(get), expected)

        // The SDK's own endpoint resolution agrees on host and path.
        const client = new S3Client({ ...settings, credentials })
        const sdk = yield* Effect.promise(() =>
          getSignedUrl(
            client,
            new PutObjectCommand({ Bucket: settings.bucket, Key: key, ContentType: "application/pdf" })
          )
        )
        client.destroy()
        assert.strictEqual(withoutQuery(sdk), expected)

        const params = new URL(put).searchParams
        assert.match(
          params.get("X-Amz-Credential") ?? "",
          new RegExp(`^AKIDEXAMPLE/\\d{8}/${settings.region}/s3/aws4_request$`)
        )
        assert.strictEqual(params.get("X-Amz-SignedHeaders"), "content-type;host")
        assert.strictEqual(params.get("X-Amz-Expires"), "3600")
        assert.strictEqual(new URL(get).searchParams.get("X-Amz-SignedHeaders"), "host")
        // No checksum of an empty body rides along (R2 and MinIO would refuse the upload).
        assert.deepStrictEqual(
          [...params.keys()].filter((name) => /checksum/i.test(name)),
          []
        )
        const secretAccessKey = credentials.secretAccessKey
        assert.isUndefined(
          refusal({ url: put, method: "PUT", headers: { "content-type": "application/pdf" }, secretAccessKey })
        )
        assert.isUndefined(refusal({ url: get, method: "GET", secretAccessKey }))
        assert.strictEqual(
          refusal({ url: put, method: "PUT", headers: { "content-type": "text/html" }, secretAccessKey }),
          "signature does not match"
        )
      })
    )
  }

  it.live("a declared length is a signed header", () =>
    Effect.gen(function* () {
      const store = yield* S3ObjectStore.make({
        bucket: "mailroom-attachments",
        region: "eu-west-3",
        accessKeyId: Redacted.make(credentials.accessKeyId),
        secretAccessKey: Redacted.make(credentials.secretAccessKey)
      })
      const url = yield* store.presignPut({ key, contentType: "application/pdf", expiresIn: 60, contentLength: 1234 })
      assert.strictEqual(new URL(url).searchParams.get("X-Amz-SignedHeaders"), "content-length;content-type;host")
      const headers = { "content-type": "application/pdf", "content-length": "1234" }
      const secretAccessKey = credentials.secretAccessKey
      assert.isUndefined(refusal({ url, method: "PUT", headers, secretAccessKey }))
      assert.isDefined(
        refusal({ url, method: "PUT", headers: { ...headers, "content-length": "1235" }, secretAccessKey })
      )
    })
  )

  it.live("a download name is a signed response-content-disposition (RFC 6266, UTF-8 filename*)", () =>
    Effect.gen(function* () {
      const store = yield* S3ObjectStore.make({
        bucket: "mailroom-attachments",
        region: "eu-west-3",
        accessKeyId: credentials.accessKeyId,
        secretAccessKey: Redacted.make(credentials.secretAccessKey)
      })
      const url = yield* store.presignGet({ key, expiresIn: 3600, filename: "Relevé août.pdf" })
      assert.strictEqual(
        new URL(url).searchParams.get("response-content-disposition"),
        Adapter.contentDisposition("Relevé août.pdf")
      )
      const secretAccessKey = credentials.secretAccessKey
      assert.isUndefined(refusal({ url, method: "GET", secretAccessKey }))
      const renamed = url.replace("response-content-disposition=attachment", "response-content-disposition=inline")
      assert.strictEqual(refusal({ url: renamed, method: "GET", secretAccessKey }), "signature does not match")
    })
  )

  it.live("the independent SigV4 check agrees with the SDK's own presigner", () =>
    Effect.gen(function* () {
      // Guards the checker used above: it must accept what AWS's SDK signs, filename* included.
      const client = new S3Client({ region: "eu-west-3", credentials })
      const url = yield* Effect.promise(() =>
        getSignedUrl(
          client,
          new GetObjectCommand({
            Bucket: "mailroom-attachments",
            Key: key,
            ResponseContentDisposition: Adapter.contentDisposition("Relevé août.pdf")
          })
        )
      )
      client.destroy()
      assert.isUndefined(refusal({ url, method: "GET", secretAccessKey: credentials.secretAccessKey }))
      assert.strictEqual(refusal({ url, method: "GET", secretAccessKey: "another secret" }), "signature does not match")
    })
  )
})
