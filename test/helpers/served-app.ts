// The broker on a real HTTP listener (port 0, loopback), for clients that need a socket, such as
// a browser: the same app testApp builds, served by @hono/node-server as src/node.ts serves it.
import { serve } from '@hono/node-server'
import type { AddressInfo } from 'node:net'
import { createApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { createDatabase } from '../../src/db/database.js'
import { createNodePool } from '../../src/db/node-pool.js'
import { createLogger } from '../../src/log.js'
import type { TestDatabase } from './database.js'

export interface ServedApp {
  base: string
  /** fetch + JSON, as curl would: status and parsed body. */
  json(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }>
  close(): Promise<void>
}

export async function servedApp(database: TestDatabase, env: Record<string, string> = {}): Promise<ServedApp> {
  const config = loadConfig({ LOG_LEVEL: 'silent', ...env }, 'node')
  const db = createDatabase(createNodePool({ connectionString: database.appUrl, max: 5 }), { longLived: true })
  const app = createApp({ config, log: createLogger(config.LOG_LEVEL), database: () => db })
  const server = await new Promise<ReturnType<typeof serve>>((ready) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => ready(s))
  })
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    base,
    async json(method, path, body, headers = {}) {
      const res = await fetch(base + path, {
        method,
        headers: { 'content-type': 'application/json', ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      const text = await res.text()
      return { status: res.status, body: text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text }
    },
    async close() {
      // A browser keeps idle keep-alive sockets open; close() alone would wait for them.
      const closing = new Promise<void>((done) => server.close(() => done()))
      if ('closeAllConnections' in server) server.closeAllConnections()
      await closing
      await db.close()
    },
  }
}
