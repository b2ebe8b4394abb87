// A small WebSocket-to-TCP bridge: Neon's serverless driver speaks PostgreSQL over a WebSocket,
// and this lets it reach a plain local PostgreSQL (dev:edge and the workerd tests). Each
// connection to /v2?address=host:port is piped byte for byte to that address. Loopback only.
import { createConnection } from 'node:net'
import { fileURLToPath } from 'node:url'
import { WebSocketServer } from 'ws'

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]'])

export interface WsBridge {
  port: number
  /** host:port, the value for NEON_WS_PROXY. */
  address: string
  close(): Promise<void>
}

export async function startWsBridge(options: { port?: number; host?: string } = {}): Promise<WsBridge> {
  const host = options.host ?? '127.0.0.1'
  const server = new WebSocketServer({ host, port: options.port ?? 0 })
  server.on('connection', (socket, request) => {
    const target = new URL(request.url ?? '/', 'ws://bridge').searchParams.get('address') ?? ''
    const at = target.lastIndexOf(':')
    const targetHost = target.slice(0, at)
    const targetPort = Number(target.slice(at + 1))
    if (!LOOPBACK.has(targetHost) || !Number.isInteger(targetPort)) {
      socket.close(1008, 'only loopback targets are bridged')
      return
    }
    const tcp = createConnection({ host: targetHost.replace(/^\[|\]$/g, ''), port: targetPort })
    const pending: Buffer[] = []
    tcp.on('connect', () => {
      for (const chunk of pending.splice(0)) tcp.write(chunk)
    })
    socket.on('message', (data: Buffer) => (tcp.connecting ? pending.push(data) : tcp.write(data)))
    tcp.on('data', (chunk) => socket.send(chunk))
    socket.on('close', () => tcp.end())
    socket.on('error', () => tcp.destroy())
    tcp.on('close', () => socket.close())
    tcp.on('error', () => socket.close())
  })
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve)
    server.once('error', reject)
  })
  const port = (server.address() as { port: number }).port
  return {
    port,
    address: `${host}:${port}`,
    close: () =>
      new Promise((resolve) => {
        for (const client of server.clients) client.terminate()
        server.close(() => resolve())
      }),
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const flag = process.argv.indexOf('--port')
  const bridge = await startWsBridge({ port: flag > 0 ? Number(process.argv[flag + 1]) : 5480 })
  console.log(`ws bridge on ${bridge.address}`)
}
