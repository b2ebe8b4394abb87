// One conformance suite every driver passes: the same calls through node-postgres and
// through Neon's serverless Pool (over the WebSocket bridge, as on the edge) behave identically.
import { neonConfig } from '@neondatabase/serverless'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { WebSocket } from 'ws'
import { startWsBridge, type WsBridge } from '../scripts/ws-bridge.js'
import { createDatabase, type Database } from '../src/db/database.js'
import { createEdgePool } from '../src/db/edge-pool.js'
import { DbError } from '../src/db/errors.js'
import { freePort } from '../src/db/embedded.js'
import { createNodePool } from '../src/db/node-pool.js'
import { freshDatabase, type TestDatabase } from './helpers/database.js'

let database: TestDatabase
let bridge: WsBridge
beforeAll(async () => {
  database = await freshDatabase()
  bridge = await startWsBridge()
  // Workers have a global WebSocket; Node 20 needs the ws package.
  neonConfig.webSocketConstructor = WebSocket
})
afterAll(async () => {
  await bridge.close()
  await database.drop()
})

const drivers: [string, (url: string) => Database][] = [
  ['node-postgres', (url) => createDatabase(createNodePool({ connectionString: url, max: 2, connectionTimeoutMillis: 1000 }), { longLived: true })],
  ['neon serverless', (url) => createDatabase(createEdgePool({ connectionString: url, wsProxy: bridge.url }), { longLived: false })],
]
// PgBouncer in transaction mode is the pooler Neon and most hosts put in front; run it when present.
const pooler = inject('poolerAddress')
if (pooler) {
  drivers.push(['node-postgres through PgBouncer', (url) => {
    // The test database is reached through PgBouncer; the unreachable case keeps its closed port.
    const u = new URL(url)
    if (url === database.url) u.host = pooler
    return createDatabase(createNodePool({ connectionString: u.toString(), max: 2, connectionTimeoutMillis: 1000 }), { longLived: true })
  }])
}

describe.each(drivers)('%s', (_name, connect) => {
  it('calls a procedure and parses its jsonb result', async () => {
    await database.sql(`update queen.maintenance_leases set holder = null, progress = null where name = 'retention'`)
    const db = connect(database.url)
    try {
      const token = crypto.randomUUID()
      const progress = await db.call('lane_claim_v1', { lane: 'retention', token, interval: '1 second', ttl: '1 second', force: true, now: new Date('2031-01-01T00:00:00Z') })
      expect(progress).toEqual({})
      expect(await db.call('lane_release_v1', { lane: 'retention', token, progress: { next: null }, result: { ok: 1 } })).toBe(true)
    } finally {
      await db.close()
    }
  })

  it('turns a server error into a DbError with its SQLSTATE', async () => {
    const db = connect(database.url)
    try {
      const error = await db.call('lane_claim_v1', { lane: 'x', token: crypto.randomUUID(), interval: 'not an interval', ttl: '1 second' }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(DbError)
      expect(error).toMatchObject({ kind: 'sqlstate', sqlstate: '22007' })
    } finally {
      await db.close()
    }
  })

  it('turns an unreachable server into an unavailable DbError', async () => {
    const closed = await freePort()
    const db = connect(`postgres://postgres:x@127.0.0.1:${closed}/postgres`)
    try {
      await expect(db.ping(2000)).rejects.toMatchObject({ kind: 'unavailable' })
    } finally {
      await db.close().catch(() => {})
    }
  })
})
