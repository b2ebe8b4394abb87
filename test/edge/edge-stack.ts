// What an edge test file starts before its tests and stops after them: the worker bundle, a fresh
// test database, the WebSocket bridge the Neon driver reaches PostgreSQL through, and as many
// workers (miniflare running the bundle in workerd) over them as the file needs, each with its own
// bindings on top of the database's.
import { rmSync } from 'node:fs'
import { dirname } from 'node:path'
import { Miniflare } from 'miniflare'
import { startWsBridge, type WsBridge } from '../../scripts/ws-bridge.js'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import { buildWorker, type WorkerBundle } from './build-worker.js'

export interface EdgeAnswer {
  status: number
  /** The parsed JSON body, or null when it was empty. */
  body: any
  headers: Headers
}

export interface EdgeWorker {
  mf: Miniflare
  /** One request with a JSON body (when given) to the worker's fetch handler. */
  call(method: string, path: string, body?: unknown): Promise<EdgeAnswer>
}

export interface EdgeStack {
  database: TestDatabase
  worker(bindings?: Record<string, string>): Promise<EdgeWorker>
  close(): Promise<void>
}

export async function startEdgeStack(): Promise<EdgeStack> {
  const bundle: WorkerBundle = buildWorker()
  const [database, bridge]: [TestDatabase, WsBridge] = await Promise.all([freshDatabase(), startWsBridge()])
  const workers: Miniflare[] = []
  return {
    database,
    async worker(bindings = {}) {
      const mf = new Miniflare({
        modules: true,
        scriptPath: bundle.scriptPath,
        modulesRoot: dirname(bundle.scriptPath),
        compatibilityDate: bundle.compatibilityDate,
        compatibilityFlags: bundle.compatibilityFlags,
        bindings: { LOG_LEVEL: 'warn', DATABASE_URL: database.url, NEON_WS_PROXY: bridge.url, ...bindings },
      })
      await mf.ready
      workers.push(mf)
      return {
        mf,
        async call(method, path, body) {
          const res = await mf.dispatchFetch(`http://edge.test${path}`, {
            method,
            headers: body === undefined ? {} : { 'content-type': 'application/json' },
            body: body === undefined ? undefined : JSON.stringify(body),
          })
          const text = await res.text()
          return { status: res.status, body: text === '' ? null : JSON.parse(text), headers: res.headers as unknown as Headers }
        },
      }
    },
    async close() {
      await Promise.all(workers.map((mf) => mf.dispose()))
      await bridge.close()
      await database.drop()
      rmSync(bundle.outdir, { recursive: true, force: true })
    },
  }
}
