// The lane runner and the maintenance leases (ENGINE 8.2, D21): one worker per interval however
// many runners race, a dead holder's lease expires, and a duplicate firing is harmless.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { dedupPurge } from '../cron/dedup-purge.js'
import type { Lane } from '../cron/lane.js'
import { runLane } from '../cron/runner.js'
import { testApp, type TestApp } from './helpers/app.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

const T0 = new Date('2030-01-01T00:00:00Z')
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000)

// A lane whose step takes long enough for every racer to be inside the same interval.
const slowLane: Lane = {
  ...dedupPurge,
  step: async (db, args) => {
    await new Promise((r) => setTimeout(r, 50))
    return dedupPurge.step!(db, args)
  },
}

async function leaseRow() {
  const [row] = await app.database.sql<{ runs: number; holder: string | null; last_result: unknown }>(
    `select runs::int as runs, holder, last_result from queen.maintenance_leases where name = 'dedup_purge'`,
  )
  return row!
}

beforeEach(async () => {
  await app.database.sql(`update queen.maintenance_leases set holder = null, expires_at = null, last_started_at = null, runs = 0 where name = 'dedup_purge'`)
})

describe('lane runner', () => {
  it('lets exactly one of eight racing runners work in one interval', async () => {
    const runs = await Promise.all(
      Array.from({ length: 8 }, () => runLane(app.db, slowLane, { config: app.config, budgetMs: 5000, now: T0 })),
    )
    expect(runs.filter((r) => r.claimed)).toHaveLength(1)
    expect((await leaseRow()).runs).toBe(1)
  })

  it('treats a second firing inside the interval as not due, and runs again once due', async () => {
    const interval = app.config.DEDUP_PURGE_INTERVAL_MS / 1000
    expect((await runLane(app.db, dedupPurge, { config: app.config, budgetMs: 5000, now: T0 })).claimed).toBe(true)
    expect((await runLane(app.db, dedupPurge, { config: app.config, budgetMs: 5000, now: at(1) })).claimed).toBe(false)
    // Due with the slack of D21: a timer that fires a little early still runs.
    expect((await runLane(app.db, dedupPurge, { config: app.config, budgetMs: 5000, now: at(interval - 4) })).claimed).toBe(true)
    expect((await leaseRow()).runs).toBe(2)
  })

  it('takes the lane from a holder that died once its lease expires', async () => {
    const ttl = app.config.LANE_LEASE_SECONDS
    const dead = await app.db.call('lane_claim_v1', { lane: 'dedup_purge', token: crypto.randomUUID(), interval: '1 second', ttl: `${ttl} seconds`, now: T0 })
    expect(dead).not.toBeNull()
    const force = { config: app.config, budgetMs: 5000, force: true }
    expect((await runLane(app.db, dedupPurge, { ...force, now: at(ttl - 1) })).claimed).toBe(false)
    expect((await runLane(app.db, dedupPurge, { ...force, now: at(ttl + 1) })).claimed).toBe(true)
    expect((await leaseRow()).holder).toBeNull()
  })

  it('never lets a run that lost its lease release or renew the new holder', async () => {
    const old = crypto.randomUUID()
    await app.db.call('lane_claim_v1', { lane: 'dedup_purge', token: old, interval: '1 second', ttl: '10 seconds', now: T0 })
    const fresh = crypto.randomUUID()
    expect(await app.db.call('lane_claim_v1', { lane: 'dedup_purge', token: fresh, interval: '1 second', ttl: '10 seconds', now: at(20) })).not.toBeNull()
    expect(await app.db.call('lane_renew_v1', { lane: 'dedup_purge', token: old, ttl: '10 seconds', progress: {}, now: at(21) })).toBe(false)
    expect(await app.db.call('lane_release_v1', { lane: 'dedup_purge', token: old, progress: {}, result: {}, now: at(21) })).toBe(false)
    expect((await leaseRow()).holder).toBe(fresh)
  })

  it('does the work: the dedup purge deletes expired hashes only', async () => {
    const [q] = await app.database.sql<{ id: string }>(`insert into queen.queues (name) values ('lane-q') returning id`)
    const [p] = await app.database.sql<{ id: string }>(`insert into queen.log_partitions (queue_id, name) values ($1, 'Default') returning id`, [q!.id])
    await app.database.sql(
      `insert into queen.log_txns (partition_id, txn_hash, frame_offset, message_id, expires_at)
       select $1, md5(g::text)::uuid, g, gen_random_uuid(), $2::timestamptz + (case when g % 2 = 0 then interval '-1 hour' else interval '1 hour' end)
         from generate_series(1, 10) g`,
      [p!.id, T0.toISOString()],
    )
    const run = await runLane(app.db, dedupPurge, { config: app.config, budgetMs: 5000, now: T0 })
    expect(run).toMatchObject({ claimed: true, processed: 5, complete: true })
    const [left] = await app.database.sql<{ n: number }>(`select count(*)::int as n from queen.log_txns`)
    expect(left!.n).toBe(5)
  })
})
