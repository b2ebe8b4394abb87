// What Node's HTTP server answers by itself, before the app sees a request: a request line and
// headers over its limit (16 KiB by default, Node's --max-http-header-size) or bytes that are not
// HTTP. Node's own answer is a bare status line with an empty body; this gives the same status
// with the broker's error envelope, so a client reads `error` and `code` as from any refusal
// (docs/limits.md).
import type { Server } from 'node:http'
import type { Duplex } from 'node:stream'

interface Refusal {
  status: number
  reason: string
  code: string
  error: string
}

function refusalOf(error: NodeJS.ErrnoException): Refusal {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, reason: 'Request Header Fields Too Large', code: 'headers_too_large', error: 'Request line and headers too large (the URL counts)' }
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, reason: 'Payload Too Large', code: 'payload_too_large', error: 'Chunk extensions too large' }
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, reason: 'Request Timeout', code: 'request_timeout', error: 'Request not received in time' }
    default:
      return { status: 400, reason: 'Bad Request', code: 'bad_request', error: 'Malformed HTTP request' }
  }
}

/** The raw HTTP/1.1 response for one refusal, closing the connection as Node's own does. */
export function refusalResponse(error: NodeJS.ErrnoException): string {
  const { status, reason, code, error: text } = refusalOf(error)
  const body = JSON.stringify({ error: text, code })
  return `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
}

export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A reset or a half-sent response leaves nothing to answer on.
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy()
      return
    }
    socket.end(refusalResponse(error))
  })
}
