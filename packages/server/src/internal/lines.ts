// The server's default log: lines to stdout, written together once per turn of the event loop (one
// write for the lines of every request answered in it, where console.log made one each), and at exit.
let pending: Array<string> = []

const flush = () => {
  if (pending.length === 0) return
  const text = `${pending.join("\n")}\n`
  pending = []
  process.stdout.write(text)
}

let hooked = false

/** Logs `line` to stdout before the next turn of the event loop, or as the process exits. */
export const toStdout = (line: string): void => {
  if (!hooked) {
    hooked = true
    process.on("exit", flush)
  }
  if (pending.length === 0) setImmediate(flush)
  pending.push(line)
}
