// A one-node Ceph cluster with radosgw (rgw.sh) in a temporary directory, on free ports of 127.0.0.1.
// Started by the run's global setup (radosgwSetup.ts); test files reach it through radosgw.ts.
import { execFile } from "node:child_process"
import { existsSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { freePort } from "@mailroom/test-support"

const run = promisify(execFile)
const script = new URL("./rgw.sh", import.meta.url).pathname

/** The user rgw.sh creates; any other key or secret fails radosgw's signature check. */
export const credentials = {
  accessKeyId: "MAILROOMTESTKEY",
  secretAccessKey: "mailroom-radosgw-test-secret"
} as const
export const region = "us-east-1"

export interface Cluster {
  readonly endpoint: string
  /** Stops the daemons and removes the cluster's directory. */
  readonly stop: () => Promise<void>
}

const required = ["/usr/bin/ceph-mon", "/usr/bin/ceph-osd", "/usr/bin/radosgw", "/usr/bin/ceph", "/usr/bin/curl"]

/**
 * Starts a cluster in a temporary directory (about 3 s). Its daemons are also stopped if this
 * process dies without calling `stop`: rgw.sh leaves a watchdog on this process's pid.
 */
export const startCluster = async (): Promise<Cluster> => {
  const absent = required.filter((path) => !existsSync(path))
  if (absent.length > 0) {
    throw new Error(
      `Ceph radosgw is not installed (${absent.join(", ")} missing): apt-get install -y --no-install-recommends ` +
        "ceph-mon ceph-osd radosgw ceph-common curl"
    )
  }
  // Another process may take a port between choosing and binding it: start again on others.
  for (let attempt = 1; ; attempt++) {
    const dir = await mkdtemp(join(tmpdir(), "mailroom-radosgw-"))
    const stop = async () => {
      await run("bash", [script, "stop", dir])
      await rm(dir, { recursive: true, force: true })
    }
    const monPort = await freePort()
    const rgwPort = await freePort()
    try {
      await run(
        "bash",
        [
          script,
          "start",
          dir,
          String(monPort),
          String(rgwPort),
          credentials.accessKeyId,
          credentials.secretAccessKey,
          String(process.pid)
        ],
        { timeout: 120_000 }
      )
      return { endpoint: `http://127.0.0.1:${rgwPort}`, stop }
    } catch (error) {
      const stderr = (error as { readonly stderr?: string }).stderr ?? ""
      await stop()
      if (attempt >= 3) throw new Error(`radosgw did not start: ${stderr || String(error)}`)
    }
  }
}
