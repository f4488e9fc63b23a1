// SIGHUP re-reads the config file and serves its organisations (keys, domains) without a restart;
// a file that cannot be read, parsed or checked is logged, and the running config is kept.
import type { RunningServer } from "../Server.js"
import { isServerConfigError, load } from "../ServerConfig.js"

export const reloadOnSighup = (path: string, running: RunningServer, options: { readonly port?: number }) => {
  const reload = async () => {
    try {
      const next = await load(path, options)
      const restart = running.reload(next)
      const count = next.organizations.length
      console.log(
        `SIGHUP: reloaded ${count} organization${count === 1 ? "" : "s"} from ${path}${
          restart.length > 0 ? `; ${restart.join(", ")} changed too, and take a restart` : ""
        }`
      )
    } catch (cause) {
      const reason = isServerConfigError(cause) ? cause.message : String((cause as Error)?.stack ?? cause)
      console.error(`SIGHUP: the config was not reloaded; the running one is kept.\n${reason}`)
    }
  }
  // One reload at a time, in the order the signals came.
  let queue = Promise.resolve()
  process.on("SIGHUP", () => {
    queue = queue.then(reload)
  })
}
