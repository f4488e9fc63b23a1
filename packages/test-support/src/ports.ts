// Free TCP ports on 127.0.0.1 for the peers tests start: one helper instead of a copy per package.
import { createServer } from "node:net"

/**
 * A port that was free a moment ago. Another process may take it before the caller binds it: a
 * peer that fails to bind should choose again (`startCluster` does).
 */
export const freePort = (): Promise<number> =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject()))
    })
  })
