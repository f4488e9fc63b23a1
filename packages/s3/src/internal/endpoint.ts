// Where a bucket's presigned URLs point, asked once of the S3 client itself: the endpoint middleware
// getSignedUrl runs (FIPS, dual-stack, accelerate, path style, custom endpoints), stopped before signing.
import { GetObjectCommand, type S3Client } from "@aws-sdk/client-s3"
import type { Target } from "./presigner.js"

// The key the client serialises its probe request with: what precedes it in the path is the
// bucket's base path, whatever prefix, bucket segment or encoding the endpoint rules chose.
const probeKey = "key"

type Middleware = Parameters<S3Client["middlewareStack"]["addRelativeTo"]>[0]

interface Resolved {
  readonly request: {
    readonly protocol: string
    readonly hostname: string
    readonly port?: number | undefined
    readonly path: string
  }
  readonly authScheme: { readonly name?: string; readonly signingName?: string; readonly signingRegion?: string }
}

const settingValue = async (setting: unknown): Promise<unknown> =>
  typeof setting === "function" ? await (setting as () => unknown)() : setting

// The client settings that decide the endpoint, under the names S3Client (and, for `endpoint` and
// `forcePathStyle`, this adapter's options) give them, as set: what a refusal names.
const settingsOf = async (client: S3Client): Promise<ReadonlyArray<string>> => {
  const config = client.config as unknown as Record<string, unknown>
  const set: Array<string> = []
  for (const name of ["useFipsEndpoint", "useDualstackEndpoint", "useAccelerateEndpoint", "forcePathStyle"]) {
    if ((await settingValue(config[name])) === true) set.push(`${name}: true`)
  }
  const endpoint = config.isCustomEndpoint === true ? await settingValue(config.endpoint) : undefined
  if (typeof endpoint === "object" && endpoint !== null && "hostname" in endpoint) {
    const { protocol, hostname, port, path } = endpoint as {
      protocol: string
      hostname: string
      port?: number
      path: string
    }
    set.push(`endpoint: ${protocol}//${hostname}${port === undefined ? "" : `:${port}`}${path}`)
  }
  return set
}

const refusal = async (client: S3Client, bucket: string, reason: string) => {
  const settings = await settingsOf(client).catch((): ReadonlyArray<string> => [])
  const given = settings.length === 0 ? "its settings" : `{ ${settings.join(", ")} }`
  // The SDK addresses a bucket that is not a DNS label by path, which some endpoints cannot take.
  const dotted = /path-style/i.test(reason) && !settings.some((setting) => setting.startsWith("forcePathStyle"))
  return new Error(
    `S3ObjectStore: the S3 client with ${given} cannot address bucket "${bucket}": ${reason}` +
      (dotted ? ` (a bucket name with dots or capitals is always addressed path-style)` : "")
  )
}

/** A bucket this adapter cannot presign for whatever the client's settings: the bucket is the option to blame. */
export class UnsignableBucket extends Error {}

// What the SDK signs otherwise than with SigV4 and the client's credentials.
const otherSigning: Readonly<Record<string, string>> = {
  "sigv4-s3express": "an S3 Express One Zone directory bucket (URLs signed with session credentials)",
  sigv4a: "a Multi-Region Access Point (URLs signed with SigV4a)"
}

/**
 * The bucket's scheme, host, port and base path, and the region and service it is signed for,
 * exactly as the client's endpoint rules resolve them for an object request. Rejects, naming the
 * settings, where the SDK itself refuses them, and where a URL would need more than SigV4 with
 * the client's credentials (S3 Express directory buckets, Multi-Region Access Points).
 */
export const resolveTarget = async (client: S3Client, bucket: string): Promise<Target> => {
  let resolved: Resolved | undefined
  // Serialised and routed, not yet signed: answers as getSignedUrl's interceptor does, sending nothing.
  const capture =
    (_next: unknown, context: { readonly authSchemes?: ReadonlyArray<Resolved["authScheme"]> }) =>
    async (args: { readonly request: Resolved["request"] }) => {
      resolved = { request: args.request, authScheme: context.authSchemes?.[0] ?? {} }
      return { output: { $metadata: {} }, response: {} }
    }
  // getSignedUrl's own procedure: a copy of the client's stack, so the client is left as it was.
  const stack = client.middlewareStack.clone()
  stack.addRelativeTo(capture as unknown as Middleware, {
    name: "mailroomEndpointCapture",
    relation: "after",
    toMiddleware: "serializerMiddleware",
    override: true
  })
  const command = new GetObjectCommand({ Bucket: bucket, Key: probeKey })
  try {
    await command.resolveMiddleware(stack, client.config, {})({ input: command.input })
  } catch (error) {
    throw await refusal(client, bucket, error instanceof Error ? error.message : String(error))
  }
  if (resolved === undefined || !resolved.request.path.endsWith(`/${probeKey}`)) {
    throw new Error(`S3ObjectStore: the S3 client did not resolve an endpoint for bucket "${bucket}"`)
  }
  const { request, authScheme } = resolved
  if (authScheme.name !== undefined && authScheme.name !== "sigv4") {
    const what = otherSigning[authScheme.name] ?? `signed with ${authScheme.name}`
    throw new UnsignableBucket(
      `S3ObjectStore: bucket "${bucket}" is ${what}, which this adapter cannot presign URLs for`
    )
  }
  const region = authScheme.signingRegion ?? String(await settingValue(client.config.region))
  return {
    protocol: request.protocol,
    hostname: request.hostname,
    port: request.port,
    basePath: request.path.slice(0, -`/${probeKey}`.length),
    signingRegion: region,
    signingName: authScheme.signingName ?? "s3"
  }
}
