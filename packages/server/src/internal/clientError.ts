// What the server answers to a request Node's HTTP parser refused (bad HTTP, headers too large, too
// slow): the status Node would send, with the JSON body every other answer of the API has.
import type { ServerResponse } from "node:http"
import type { Socket } from "node:net"

// node:http by getBuiltinModule, as Server.ts takes it (an ESM import of it loads undici: ~25 ms).
const { STATUS_CODES } = process.getBuiltinModule("node:http")

/** What Node's parser refused, as the API's clients expect it: a status and a JSON {message}. */
const clientErrorAnswer = (code: string | undefined): readonly [number, string] => {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return [431, "the request line or headers are larger than the server accepts"]
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return [408, "the request took too long to arrive"]
    default:
      return [400, "the request is not valid HTTP/1.1"]
  }
}

/**
 * Node answers a request its parser refuses with an empty body; this writes the same status with a
 * JSON body, as every other answer of the API has. Nothing is written when the socket cannot take
 * it or an answer is already under way on it.
 */
export const answerClientError = (error: Error & { readonly code?: string }, socket: Socket) => {
  const current = (socket as Socket & { readonly _httpMessage?: ServerResponse })._httpMessage
  if (error.code === "ECONNRESET" || !socket.writable || current?.headersSent === true) {
    socket.destroy()
    return
  }
  const [status, message] = clientErrorAnswer(error.code)
  const body = JSON.stringify({ message })
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      "content-type: application/json; charset=utf-8\r\n" +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      `connection: close\r\n\r\n${body}`
  )
}
