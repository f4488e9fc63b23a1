// A real mailroom server in this process on the embedded defaults (local disk storage, .eml outbox)
// in a temporary directory, and what a test reads back from it: the messages the outbox wrote.
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Server, ServerConfig } from "@mailroom/server"

export const acme = { apiKey: "mr_test_acme", accessToken: "tok_acme" }
export const globex = { apiKey: "mr_test_globex", accessToken: "tok_globex" }

export interface Mailroom {
  readonly url: string
  /** The `.eml` files the outbox has written, by name. */
  readonly sent: () => Promise<ReadonlyArray<string>>
  readonly readSent: (name: string) => Promise<string>
  readonly close: () => Promise<void>
}

/** Starts the server; `provider` is its config section, by default the outbox (`outbox`, relative to a temp dir). */
export const startMailroom = async (
  provider: Record<string, unknown> = { kind: "outbox", dir: "outbox" }
): Promise<Mailroom> => {
  const dir = await mkdtemp(join(tmpdir(), "mailroom-client-"))
  const config = ServerConfig.parse(
    {
      port: 0,
      serviceDomain: "mailroom.test",
      organizations: [
        {
          id: "org_acme",
          slug: "acme",
          verifiedDomains: ["acme.example"],
          apiKeys: [acme.apiKey],
          accessTokens: [acme.accessToken]
        },
        { id: "org_globex", slug: "globex", apiKeys: [globex.apiKey], accessTokens: [globex.accessToken] }
      ],
      storage: { kind: "local", dir: "storage", signingSecret: "client-test-secret" },
      provider
    },
    { baseDir: dir }
  )
  const server = await Server.start(config, { log: () => {}, logError: () => {} })
  const outbox = join(dir, "outbox")
  const sent = async () => {
    try {
      return (await readdir(outbox)).filter((name) => name.endsWith(".eml"))
    } catch {
      return []
    }
  }
  return {
    url: server.url,
    sent,
    readSent: (name) => readFile(join(outbox, name), "utf8"),
    close: async () => {
      await server.close()
      await rm(dir, { recursive: true, force: true })
    }
  }
}
