// A small WebSocket-to-TCP bridge: Neon's serverless driver speaks the PostgreSQL wire protocol
// inside WebSocket frames, and this lets it reach a plain local PostgreSQL (dev:edge, the workerd
// tests, the driver conformance suite). Each connection to /v2?address=host:port is piped byte
// for byte to that address. Only loopback targets are bridged: it is a dev tool, and an open
// bridge would let any local web page reach any host through it.
import { createServer, type IncomingMessage } from 'node:http'
import { createConnection } from 'node:net'
import type { Duplex } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { WebSocketServer } from 'ws'

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1'])

export interface WsBridge {
  port: number
  /** host:port, the value for NEON_WS_PROXY. */
  url: string
  close(): Promise<void>
}

/** The loopback host and port a request asks for, or null when it must be refused. */
function target(request: IncomingMessage): { host: string; port: number } | null {
  const url = new URL(request.url ?? '/', 'ws://bridge')
  if (url.pathname !== '/v2') return null
  const address = url.searchParams.get('address') ?? ''
  const at = address.lastIndexOf(':')
  const host = address.slice(0, at).replace(/^\[(.*)\]$/, '$1')
  const port = Number(address.slice(at + 1))
  if (!LOOPBACK.has(host) || !Number.isInteger(port) || port < 1 || port > 65535) return null
  return { host, port }
}

function refuse(socket: Duplex, status: string): void {
  socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`)
}

/**
 * What a connection's bytes go through on their way (bench:edge shapes latency and counts round
 * trips with one); by default they pass at once. `open` runs before the WebSocket upgrade is
 * answered, so it can stand for the connection handshake's network time.
 */
export interface BridgeLink {
  open?(): Promise<void>
  toServer(data: Buffer, deliver: (data: Buffer) => void): void
  toClient(data: Buffer, deliver: (data: Buffer) => void): void
}

const directLink: BridgeLink = { toServer: (data, deliver) => deliver(data), toClient: (data, deliver) => deliver(data) }

export async function startWsBridge(options: { port?: number; host?: string; link?: () => BridgeLink } = {}): Promise<WsBridge> {
  const host = options.host ?? '127.0.0.1'
  const http = createServer((_req, res) => res.writeHead(426, { connection: 'close' }).end())
  const wss = new WebSocketServer({ noServer: true })

  // Refused before the upgrade, so the driver sees a failed connection rather than an open one
  // that closes at once.
  http.on('upgrade', (request, socket, head) => {
    const to = target(request)
    if (!to) return refuse(socket, '403 Forbidden')
    const link = options.link?.() ?? directLink
    const upgrade = () => wss.handleUpgrade(request, socket, head, (ws) => {
      // net.Socket queues writes made while it is still connecting, so nothing is lost.
      const tcp = createConnection(to)
      tcp.setNoDelay(true)
      // binaryType is the default 'nodebuffer', so every frame arrives as one Buffer.
      ws.on('message', (data) => link.toServer(data as Buffer, (bytes) => tcp.write(bytes)))
      tcp.on('data', (chunk) => link.toClient(chunk, (bytes) => ws.readyState === ws.OPEN && ws.send(bytes, { binary: true })))
      ws.on('close', () => tcp.end())
      ws.on('error', () => tcp.destroy())
      tcp.on('close', () => ws.close())
      tcp.on('error', () => ws.terminate())
    })
    // Without a link that waits, the upgrade is answered at once, as it always was.
    if (link.open) void link.open().then(upgrade)
    else upgrade()
  })

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject)
    http.listen(options.port ?? 0, host, () => resolve())
  })
  const port = (http.address() as { port: number }).port
  const url = `${host.includes(':') ? `[${host}]` : host}:${port}`
  return {
    port,
    url,
    close: () =>
      new Promise((resolve) => {
        for (const client of wss.clients) client.terminate()
        wss.close()
        http.closeAllConnections()
        http.close(() => resolve())
      }),
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const arg = (name: string) => {
    const at = process.argv.indexOf(name)
    return at > 0 ? process.argv[at + 1] : undefined
  }
  const port = Number(arg('--port') ?? 5480)
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error('usage: tsx scripts/ws-bridge.ts [--port 5480] [--host 127.0.0.1]')
    process.exit(2)
  }
  const bridge = await startWsBridge({ port, host: arg('--host') })
  console.log(`ws bridge on ${bridge.url} (set NEON_WS_PROXY=${bridge.url}); loopback targets only`)
  const stop = () => void bridge.close().then(() => process.exit(0))
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
}
