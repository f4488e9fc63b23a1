// `mailroom`: starts the service from MAILROOM_CONFIG (default mailroom.config.json); PORT and HOST
// override the file. With --quickstart it prints the example credential and a curl for each step.
import { isServerStartError, start } from "../Server.js"
import { isServerConfigError, load } from "../ServerConfig.js"
import { quickstartText } from "./quickstart.js"
import { reloadOnSighup } from "./reload.js"

const configPath = process.env.MAILROOM_CONFIG ?? "mailroom.config.json"

// A reader that goes away (a log collector that dies, `| head`) fails the next write with EPIPE,
// emitted on the stream: unheard, that would end the server in the middle of sends. Its lines are
// dropped instead, said once on the other stream while that one is still there.
for (const [stream, name, other] of [
  [process.stdout, "stdout", process.stderr],
  [process.stderr, "stderr", process.stdout]
] as const) {
  let said = false
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (said) return
    said = true
    if (!other.destroyed)
      other.write(
        `mailroom: ${name} cannot be written (${error.code ?? error.message}); its lines are dropped from now on\n`
      )
  })
}

const fail = (message: string): never => {
  console.error(message)
  process.exit(1)
}

const portFromEnv = () => {
  const raw = process.env.PORT
  if (raw === undefined || raw === "") return undefined
  // Digits only: Number() would also take "0x10", "1e3" or " 3000 " as some other port.
  const port = /^\d+$/.test(raw) ? Number(raw) : Number.NaN
  return Number.isInteger(port) && port >= 0 && port <= 65535 ? port : fail(`PORT: "${raw}" is not a port number`)
}

try {
  const port = portFromEnv()
  const config = await load(configPath, port === undefined ? {} : { port })
  const running = await start(config, process.env.HOST ? { host: process.env.HOST } : {})
  // Before the line that says it listens: whoever waits for that line may signal at once.
  reloadOnSighup(configPath, running, port === undefined ? {} : { port })
  let stopping = false
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.on(signal, () => {
      if (stopping) return
      stopping = true
      console.log(`${signal}: finishing requests in flight, then stopping`)
      running.close().then(
        () => process.exit(0),
        (cause) => fail(`shutdown failed: ${String(cause)}`)
      )
    })
  }
  // The modules are all compiled by now: their code is written to the cache for the next start, before
  // the line a supervisor may wait for (and stop or kill the server at once).
  process.getBuiltinModule("node:module").flushCompileCache?.()
  console.log(`mailroom listening on ${running.url} (config: ${configPath})`)
  if (running.viewer !== undefined) console.log(`outbox viewer: ${running.viewer} (every organisation's mail)`)
  else if (config.provider.kind === "outbox" && config.viewer.enabled) {
    console.log(
      `note: the outbox viewer is off: the server listens on ${process.env.HOST} and viewer.token is not set (see the viewer section of the server README)`
    )
  }
  if (config.storage.kind === "local" && config.storage.signingSecret === "change-me") {
    console.warn(
      "warning: storage.signingSecret is the example value; anyone who knows it can forge upload and download URLs. Set your own before this server is reachable by others."
    )
  }
  if (config.idempotency.kind === "memory") {
    console.warn(
      'note: Idempotency-Keys are kept in memory: a restart forgets them, and other instances do not see them. Several instances serving one API need "idempotency": {"kind": "redis"}.'
    )
  }
  if (config.messages.kind === "memory") {
    console.warn(
      'note: message records and suppressions are kept in memory: a restart forgets them, and other instances do not see them. Several instances serving one API need "messages": {"kind": "postgres"}.'
    )
  } else if (config.messages.kind === "sqlite" && config.storage.kind !== "local") {
    console.warn(
      `note: message records and suppressions are kept in SQLite at ${config.messages.path}, on this machine only. Several instances serving one API need "messages": {"kind": "postgres"}.`
    )
  }
  if (process.argv.includes("--quickstart")) console.log(quickstartText(running.url, config, running.viewer))
} catch (cause) {
  fail(
    isServerConfigError(cause) || isServerStartError(cause)
      ? cause.message
      : `mailroom could not start: ${String((cause as Error)?.stack ?? cause)}`
  )
}
