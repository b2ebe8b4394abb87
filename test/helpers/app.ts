// The broker as the Node runtime builds it, over a test database, called through app.request():
// real HTTP semantics (status, headers, wire JSON) without a socket.
import { createApp, type AppDeps } from '../../src/app.js'
import { loadConfig, type Config } from '../../src/config.js'
import { createDatabase, type Database } from '../../src/db/database.js'
import { NODE_FUSION } from '../../src/db/fusion.js'
import { createNodePool } from '../../src/db/node-pool.js'
import { createLogger } from '../../src/log.js'
import { nodeDeflater } from '../../src/node-deflater.js'
import { freshDatabase, type TestDatabase } from './database.js'

export interface TestApp {
  request(path: string, init?: RequestInit): Promise<Response>
  /** JSON helper: sends `body` as JSON and returns status, headers and the parsed JSON body (text for other types). */
  json(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>
  db: Database
  database: TestDatabase
  config: Config
  close(): Promise<void>
}

export interface TestAppOptions {
  env?: Record<string, string>
  /** Reuse a database (e.g. two apps over one database); a fresh one is made otherwise. */
  database?: TestDatabase
  deps?: Partial<AppDeps>
}

export async function testApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = options.database ?? (await freshDatabase())
  const config = loadConfig({ LOG_LEVEL: 'silent', ...options.env }, 'node')
  // The Node runtime's own database layer, push fusion included, so route tests exercise what ships.
  const db = createDatabase(createNodePool({ connectionString: database.appUrl, max: 5 }), { longLived: true, fusion: NODE_FUSION })
  const app = createApp({ config, log: createLogger(config.LOG_LEVEL), database: () => db, deflater: nodeDeflater, ...options.deps })
  const request = async (path: string, init?: RequestInit) => app.request(path, init)
  return {
    request,
    async json(method, path, body, headers = {}) {
      const res = await request(path, {
        method,
        headers: { 'content-type': 'application/json', ...headers },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      })
      const text = await res.text()
      // /metrics/prometheus answers the exposition format: its body stays text.
      const json = (res.headers.get('content-type') ?? '').includes('application/json')
      return { status: res.status, headers: res.headers, body: text === '' ? null : json ? JSON.parse(text) : text }
    },
    db,
    database,
    config,
    async close() {
      await db.close()
      if (!options.database) await database.drop()
    },
  }
}

/** For the workerd comparison: the Node-built app over an existing database URL. */
export async function nodeApp(url: string, env: Record<string, string> = {}) {
  const config = loadConfig({ LOG_LEVEL: 'silent', ...env }, 'node')
  const db = createDatabase(createNodePool({ connectionString: url, max: 2 }), { longLived: true })
  const app = createApp({ config, log: createLogger('silent'), database: () => db })
  return {
    request: async (path: string, init?: RequestInit) => app.request(path, init),
    close: () => db.close(),
  }
}
