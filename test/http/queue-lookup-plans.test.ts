// Queue rows are found by (tenant_id, name) on every push and auto-create. The discovery indexes
// also lead with tenant_id, so on a table without fresh statistics the planner once costed them the
// same as the unique key, and push's generic plans scanned every queue of the tenant per name (a
// push creating 10 000 queues took 44 s; bench/create-queues.ts measures it). Migration 0018 makes
// them partial so only a namespace/task filter can choose them; the bulk create is set-based.
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { push } from '../helpers/engine.js'

let app: TestApp
let client: pg.Client
beforeAll(async () => {
  app = await testApp()
  client = new pg.Client({ connectionString: app.database.url })
  await client.connect()
})
afterAll(async () => {
  await client.end()
  await app.close()
})

/** The names of the indexes a plan scans. */
async function indexesOf(sql: string, params: unknown[] = []): Promise<string[]> {
  const [row] = (await client.query(`explain (format json) ${sql}`, params)).rows
  const names: string[] = []
  const walk = (node: Record<string, unknown>) => {
    if (typeof node['Index Name'] === 'string') names.push(node['Index Name'])
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child)
  }
  walk(row['QUERY PLAN'][0].Plan)
  return names
}

describe('queue lookups', () => {
  it("a generic plan of the lookup by name uses the unique key, on a table the planner has no statistics for", async () => {
    await client.query('set plan_cache_mode = force_generic_plan')
    await client.query('prepare by_name(text, text) as select id from queen.queues where tenant_id = $1 and name = $2')
    expect(await indexesOf(`execute by_name('', 'orders')`)).toEqual(['queues_tenant_id_name_key'])
    await client.query('deallocate by_name')
    await client.query('reset plan_cache_mode')
  })

  it('discovery by namespace or by task can still use its index', async () => {
    await client.query('set enable_seqscan = off')
    try {
      expect(await indexesOf(`select id from queen.queues where tenant_id = '' and namespace = 'billing'`)).toEqual(['queues_discovery_idx'])
      expect(await indexesOf(`select id from queen.queues where tenant_id = '' and task = 'invoice'`)).toEqual(['queues_task_idx'])
    } finally {
      await client.query('reset enable_seqscan')
    }
  })

  it('one push creates 2 000 queues, and overlapping creating pushes in parallel each land every frame once', async () => {
    const names = (from: number, count: number) => Array.from({ length: count }, (_, i) => `bulk-${String(from + i).padStart(5, '0')}`)
    await push(app, names(0, 2000).map((queue) => ({ queue, partition: 'p', payload: 1 })))
    // Three pushes over 2 000 new names, each overlapping the next by half, all creating at once.
    await Promise.all([0, 500, 1000].map((from) => push(app, names(2000 + from, 1000).map((queue) => ({ queue, partition: 'p', payload: from })))))
    const [counts] = await app.database.sql<{ queues: string; partitions: string; frames: string }>(`
      select count(distinct q.id) as queues, count(distinct p.id) as partitions, coalesce(sum(p.last_offset + 1), 0) as frames
        from queen.queues q join queen.log_partitions p on p.queue_id = q.id where q.name like 'bulk-%'`)
    expect(counts).toEqual({ queues: '4000', partitions: '4000', frames: '5000' })
  })
})

describe('creating no targets', () => {
  it('a transaction whose push names no items answers at once (the set-based create must not wait for names it was never given)', async () => {
    const res = await app.json('POST', '/api/v1/transaction', { operations: [{ type: 'push', items: [] }], requiredLeases: [] })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ success: true })
  })
})
