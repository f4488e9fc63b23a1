// Vitest global setup: one radosgw cluster for the whole run, started only when a test file asks for
// it (a run without S3 tests pays nothing) and stopped at the end, whether the tests passed or not.
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import type { TestProject } from "vitest/node"
import { type Cluster, startCluster } from "./radosgwCluster.js"

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Test files run in worker processes; they ask this process over HTTP, so the start happens once
  // and concurrent askers wait for the same one.
  let cluster: Promise<Cluster> | undefined
  const control = createServer((_request, response) => {
    cluster ??= startCluster()
    cluster.then(
      ({ endpoint }) => response.end(endpoint),
      (error: unknown) => {
        response.statusCode = 500
        response.end(String(error))
      }
    )
  })
  await new Promise<void>((resolve) => control.listen(0, "127.0.0.1", resolve))
  project.provide("radosgw", `http://127.0.0.1:${(control.address() as AddressInfo).port}`)
  return async () => {
    control.close()
    await cluster?.then(
      (started) => started.stop(),
      () => {}
    )
  }
}
