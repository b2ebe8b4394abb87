// What survives what (docs/ephemeral.md), against a PostgreSQL of this test's own: a broker restart
// and a clean PostgreSQL restart keep contents, cursors and leases; a PostgreSQL crash (the
// postmaster killed with SIGKILL, then started again, so crash recovery runs) empties the UNLOGGED
// contents and mints a new incarnation, while the declarations, ordinary rows, come back intact.
// An ack of an id minted before the crash answers 'stale'.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { createDatabase, type Database } from '../src/db/database.js'
import { startEmbeddedPostgres, type EmbeddedServer } from '../src/db/embedded.js'
import { migrate } from '../src/db/migrate.js'
import { createNodePool } from '../src/db/node-pool.js'
import { createLogger } from '../src/log.js'

const dataDir = mkdtempSync(join(tmpdir(), 'queen-ephemeral-survival-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

type Broker = { json(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>; close(): Promise<void> }

/** A broker process over the server: a fresh app and pool, as a restarted broker would have. */
function broker(server: EmbeddedServer): Broker {
  const db: Database = createDatabase(createNodePool({ connectionString: server.url, max: 3 }), { longLived: true })
  const app = createApp({ config: loadConfig({ LOG_LEVEL: 'silent' }, 'node'), log: createLogger('silent'), database: () => db })
  return {
    async json(method, path, body) {
      const res = await app.request(path, {
        method,
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      return { status: res.status, body: await res.json() }
    },
    close: () => db.close(),
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Starts the cluster again; after a crash the old backends may hold shared memory for a moment. */
async function startAgain(port: number): Promise<EmbeddedServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startEmbeddedPostgres({ dataDir, port })
    } catch (error) {
      if (attempt >= 20) throw error
      await new Promise((r) => setTimeout(r, 500))
    }
  }
}

describe('ephemeral survival', () => {
  it('keeps contents across a broker restart and a clean PostgreSQL restart, and loses only them in a PostgreSQL crash', async () => {
    let server = await startEmbeddedPostgres({ dataDir })
    const port = server.port
    const migration = createNodePool({ connectionString: server.url, max: 1 })
    await migrate(migration, { statementTimeoutMs: 25_000 })
    await migration.end()

    const options = { maxLength: 500, leaseSeconds: 600, retryLimit: 2 }
    const push = (b: Broker, payloads: unknown[]) => b.json('POST', '/api/v1/ephemeral/push', { queue: 'keep', messages: payloads.map((payload) => ({ payload })) })
    const pop = (b: Broker) => b.json('GET', '/api/v1/ephemeral/pop?queue=keep&group=g')
    const ack = (b: Broker, id: string) => b.json('POST', '/api/v1/ephemeral/ack', { queue: 'keep', group: 'g', acks: [{ id }] })
    const epoch = async (b: Broker) => (await b.json('GET', '/api/v1/system/ephemeral')).body.epoch as string

    let b = broker(server)
    try {
      expect((await b.json('POST', '/api/v1/ephemeral/configure', { queue: 'keep', options })).status).toBe(201)
      await push(b, [1, 2, 3])
      const leased = (await pop(b)).body.messages[0]
      const firstEpoch = await epoch(b)

      // 1. Broker restart: a new process, the same database.
      await b.close()
      b = broker(server)
      expect((await ack(b, leased.id)).body.results[0].outcome).toBe('acked')
      const second = (await pop(b)).body.messages[0]
      expect(second.payload).toBe(2)

      // 2. Clean PostgreSQL restart: the shutdown checkpoint writes the unlogged tables too.
      await b.close()
      await server.stop()
      server = await startAgain(port)
      b = broker(server)
      expect(await epoch(b)).toBe(firstEpoch)
      expect((await ack(b, second.id)).body.results[0].outcome).toBe('acked')
      const third = (await pop(b)).body.messages[0]
      expect(third.payload).toBe(3)
      await push(b, [4])

      // 3. PostgreSQL crash: SIGKILL to the postmaster, then start; crash recovery resets every
      //    unlogged table to empty.
      await b.close()
      const pidFile = join(server.dataDir, 'postmaster.pid')
      const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0])
      process.kill(pid, 'SIGKILL')
      while (alive(pid)) await new Promise((r) => setTimeout(r, 50))
      expect(existsSync(pidFile)).toBe(true)
      server = await startAgain(port)
      b = broker(server)

      const after = await b.json('GET', '/api/v1/ephemeral/queues')
      expect(after.body.queues).toEqual([expect.objectContaining({ queue: 'keep', tier: 'declared', depth: 0, bytes: 0, groups: 0, options: expect.objectContaining(options) })])
      expect(await epoch(b)).not.toBe(firstEpoch)
      expect((await ack(b, third.id)).body.results[0].outcome).toBe('stale')
      expect((await pop(b)).body.messages).toEqual([])
      // The queue serves again at once, and its new ids are not the old ones.
      await push(b, [5])
      const fresh = (await pop(b)).body.messages[0]
      expect(fresh.payload).toBe(5)
      expect([leased.id, second.id, third.id]).not.toContain(fresh.id)
    } finally {
      await b.close()
      await server.stop()
    }
  }, 120_000)
})
