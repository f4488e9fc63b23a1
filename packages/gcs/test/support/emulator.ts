// Starts the Cloud Storage emulator of firebase-tools in this process, on 127.0.0.1 and a free port,
// and records the requests it receives. Only its JSON API is used: no rules runtime, so no Java.
import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { createRequire } from "node:module"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

// firebase-tools publishes no types or exports for its emulators; these are the parts used here
// (lib/emulator/storage/index.js, server.js and registry.js of firebase-tools 15).
interface StorageEmulatorArgs {
  readonly projectId: string
  readonly host: string
  readonly port: number
}
type StorageEmulatorClass = new (args: StorageEmulatorArgs) => { getPersistenceTmpDir(): string }
type ExpressApp = (request: IncomingMessage, response: ServerResponse) => void
interface FirebaseTools {
  readonly StorageEmulator: StorageEmulatorClass
  readonly createApp: (projectId: string, emulator: unknown) => Promise<ExpressApp>
  readonly EmulatorRegistry: { set(name: string, emulator: unknown): void; clear(name: string): void }
}

const load = (): FirebaseTools => {
  const require = createRequire(import.meta.url)
  return {
    StorageEmulator: require("firebase-tools/lib/emulator/storage/index.js").StorageEmulator,
    createApp: require("firebase-tools/lib/emulator/storage/server.js").createApp,
    EmulatorRegistry: require("firebase-tools/lib/emulator/registry.js").EmulatorRegistry
  }
}

export interface RecordedRequest {
  readonly method: string
  readonly url: string
  readonly contentType: string | undefined
}

export interface StorageEmulator {
  /** `http://127.0.0.1:<port>`, the `apiEndpoint` to give the store. */
  readonly origin: string
  readonly projectId: string
  /** Every request the emulator received, in order. */
  readonly requests: Array<RecordedRequest>
  readonly close: () => Promise<void>
}

export const startStorageEmulator = async (projectId = "demo-mailroom"): Promise<StorageEmulator> => {
  const { StorageEmulator, createApp, EmulatorRegistry } = load()
  const requests: Array<RecordedRequest> = []
  let app: ExpressApp | undefined
  // Listen first: the emulator builds the URLs it returns from the port it is told.
  const server = createServer((request, response) => {
    requests.push({
      method: request.method ?? "",
      url: request.url ?? "",
      contentType: request.headers["content-type"]
    })
    if (app === undefined) response.writeHead(503).end()
    else app(request, response)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo

  // Blobs go to a directory of our own, not the shared one under the system temp dir.
  const blobs = mkdtempSync(join(tmpdir(), "mailroom-gcs-emulator-"))
  class IsolatedStorageEmulator extends StorageEmulator {
    override getPersistenceTmpDir() {
      return blobs
    }
  }
  const emulator = new IsolatedStorageEmulator({ projectId, host: "127.0.0.1", port })
  // Its upload and bucket handlers look themselves up in the registry to build self links.
  EmulatorRegistry.set("storage", emulator)
  app = await createApp(projectId, emulator)

  return {
    origin: `http://127.0.0.1:${port}`,
    projectId,
    requests,
    close: async () => {
      EmulatorRegistry.clear("storage")
      server.closeAllConnections()
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())))
      rmSync(blobs, { recursive: true, force: true })
    }
  }
}
