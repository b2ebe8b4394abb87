// POST /api/v1/partitions/changed (q&r, ENGINE 9.1-9.2): enumeration and changed-since sweeps,
// paging, mode-tagged cursors, per-entry errors, safeTime, tenancy, bad input, nothing written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { push, writtenRows } from '../helpers/engine.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

const changed = (entries: unknown, headers?: Record<string, string>) => app.json('POST', '/api/v1/partitions/changed', { entries }, headers)
const UTC_MICROS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/

async function fill(queue: string, partitions: string[], perPartition = 1) {
  await push(app, partitions.flatMap((partition) => Array.from({ length: perPartition }, (_, i) => ({ queue, partition, payload: { i } }))))
}

/** Every page of one sweep, following `next` until a short page. */
async function sweep(entry: Record<string, unknown>) {
  const pages: { names: string[]; next: string | null }[] = []
  let after: string | undefined
  for (;;) {
    const res = await changed([{ ...entry, ...(after ? { after } : {}) }])
    expect(res.status).toBe(200)
    const [e] = res.body.entries
    pages.push({ names: e.partitions.map((p: { name: string }) => p.name), next: e.next })
    if (!e.next) return pages
    after = e.next
  }
}

describe('partitions/changed', () => {
  it('answers safeTime even for an empty entries array, 5 s behind the oldest open transaction', async () => {
    const before = Date.now()
    const res = await changed([])
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ safeTime: expect.stringMatching(UTC_MICROS), safeTimeDegraded: false, entries: [] })
    expect(Date.parse(res.body.safeTime)).toBeLessThanOrEqual(before - 4000)
  })

  it('enumerates by name with lastOffset, logStart and lastWriteAt, paging until a short page', async () => {
    const names = Array.from({ length: 25 }, (_, i) => `p${String(i).padStart(2, '0')}`)
    await fill('enum', names, 2)
    const pages = await sweep({ queue: 'enum', limit: 10 })
    expect(pages.map((p) => p.names.length)).toEqual([10, 10, 5])
    expect(pages.flatMap((p) => p.names)).toEqual(names)
    const first = (await changed([{ queue: 'enum', limit: 1 }])).body.entries[0]
    expect(first).toEqual({
      queue: 'enum',
      partitions: [{ name: 'p00', lastOffset: 1, logStart: 0, lastWriteAt: expect.stringMatching(UTC_MICROS) }],
      next: 'n|p00',
    })
    expect(first.partitions[0].lastWriteAt).toMatch(/\.000000Z$/) // quantised to the second
  })

  it('ends an exact multiple of the limit with one empty page', async () => {
    await fill('exact', Array.from({ length: 6 }, (_, i) => `x${i}`))
    expect((await sweep({ queue: 'exact', limit: 3 })).map((p) => p.names.length)).toEqual([3, 3, 0])
  })

  it('pages names that contain the cursor separator', async () => {
    await fill('pipes', ['a|1', 'a|2', 'b|x|y'])
    expect((await sweep({ queue: 'pipes', limit: 1 })).flatMap((p) => p.names)).toEqual(['a|1', 'a|2', 'b|x|y'])
    expect((await sweep({ queue: 'pipes', since: '2000-01-01T00:00:00Z', limit: 1 })).flatMap((p) => p.names).sort()).toEqual(['a|1', 'a|2', 'b|x|y'])
  })

  it('sweeps changed-since from the second of since, and sees a partition bumped mid-sweep again', async () => {
    await fill('since', ['s0', 's1', 's2', 's3'])
    const all = await sweep({ queue: 'since', since: '2000-01-01T00:00:00.000000Z', limit: 2 })
    expect(all.flatMap((p) => p.names).sort()).toEqual(['s0', 's1', 's2', 's3'])
    expect((await changed([{ queue: 'since', since: new Date(Date.now() + 60_000).toISOString() }])).body.entries[0].partitions).toEqual([])

    // First page, then s0 (already seen) is written two seconds later: it moves past the cursor.
    const page1 = (await changed([{ queue: 'since', since: '2000-01-01T00:00:00Z', limit: 2 }])).body.entries[0]
    const seen = page1.partitions.map((p: { name: string }) => p.name)
    await app.database.sql(
      `select queen.log_push_v1(p_tenant => '', p_items => $1::jsonb, p_now => now() + interval '2 seconds')`,
      [JSON.stringify([{ index: 0, queue: 'since', partition: seen[0], enc: false, data: 'bump' }])],
    )
    const rest: string[] = []
    let after = page1.next
    while (after) {
      const e = (await changed([{ queue: 'since', since: '2000-01-01T00:00:00Z', limit: 2, after }])).body.entries[0]
      rest.push(...e.partitions.map((p: { name: string }) => p.name))
      after = e.next
    }
    expect(rest).toContain(seen[0])
    expect(new Set([...seen, ...rest])).toEqual(new Set(['s0', 's1', 's2', 's3']))
  })

  it('answers BAD_CURSOR for a cursor of the other mode or garbage, without touching other entries', async () => {
    await fill('cursors', ['c0', 'c1'])
    const byName = (await changed([{ queue: 'cursors', limit: 1 }])).body.entries[0].next
    const bySince = (await changed([{ queue: 'cursors', since: '2000-01-01T00:00:00Z', limit: 1 }])).body.entries[0].next
    const res = await changed([
      { queue: 'cursors', since: '2000-01-01T00:00:00Z', after: byName },
      { queue: 'cursors', after: bySince },
      { queue: 'cursors', after: 'garbage' },
      { queue: 'cursors', since: '2000-01-01T00:00:00Z', after: 't|notanumber|c0' },
      { queue: 'cursors', after: byName },
    ])
    expect(res.status).toBe(200)
    const [a, b, c, d, ok] = res.body.entries
    for (const bad of [a, b, c, d]) expect(bad).toEqual({ queue: 'cursors', error: 'BAD_CURSOR', message: expect.any(String) })
    expect(ok.partitions.map((p: { name: string }) => p.name)).toEqual(['c1'])
  })

  it('answers QUEUE_NOT_FOUND per entry for an unknown queue', async () => {
    await fill('known', ['k'])
    const res = await changed([{ queue: 'nope' }, { queue: 'known' }])
    expect(res.body.entries[0]).toEqual({ queue: 'nope', error: 'QUEUE_NOT_FOUND', message: 'Queue not found' })
    expect(res.body.entries[1].partitions).toHaveLength(1)
  })

  it('clamps limit to [1, 10000]', async () => {
    await fill('clamp', ['a', 'b'])
    for (const limit of [0, -5]) expect((await changed([{ queue: 'clamp', limit }])).body.entries[0]).toMatchObject({ next: 'n|a' })
    expect((await changed([{ queue: 'clamp', limit: 1_000_000 }])).body.entries[0]).toMatchObject({ next: null })
  })

  it('refuses malformed requests with 400 and accepts exactly 100 entries', async () => {
    const bad: unknown[] = [
      undefined,
      'all',
      Array.from({ length: 101 }, () => ({ queue: 'clamp' })),
      [{ queue: 5 }],
      ['clamp'],
      [{ queue: 'clamp', since: 'yesterday' }],
      [{ queue: 'clamp', limit: 1.5 }],
      [{ queue: 'clamp', after: 7 }],
    ]
    for (const entries of bad) {
      const res = await app.json('POST', '/api/v1/partitions/changed', entries === undefined ? {} : { entries })
      expect(res.status, JSON.stringify(entries)?.slice(0, 60)).toBe(400)
      expect(res.body.code).toBe('invalid_request')
    }
    expect((await changed(Array.from({ length: 100 }, () => ({ queue: 'clamp' })))).status).toBe(200)
  })

  it('writes nothing', async () => {
    await fill('readonly', ['r'])
    const before = await writtenRows(app)
    await changed([{ queue: 'readonly' }, { queue: 'readonly', since: '2000-01-01T00:00:00Z' }])
    expect(await writtenRows(app)).toEqual(before)
  })

  it("never lists another tenant's partitions", async () => {
    const tenants = await testApp({ database: app.database, env: { QUEEN_TENANCY_HEADER: 'X-Tenant' } })
    try {
      await tenants.json('POST', '/api/v1/push', { items: [{ queue: 'shared', partition: 'acme-only', payload: 1 }] }, { 'x-tenant': 'acme' })
      await tenants.json('POST', '/api/v1/push', { items: [{ queue: 'shared', partition: 'globex-only', payload: 1 }] }, { 'x-tenant': 'globex' })
      for (const [tenant, name] of [['acme', 'acme-only'], ['globex', 'globex-only']]) {
        for (const entry of [{ queue: 'shared' }, { queue: 'shared', since: '2000-01-01T00:00:00Z' }]) {
          const res = await tenants.json('POST', '/api/v1/partitions/changed', { entries: [entry] }, { 'x-tenant': tenant! })
          expect(res.body.entries[0].partitions.map((p: { name: string }) => p.name)).toEqual([name])
        }
      }
      const none = await tenants.json('POST', '/api/v1/partitions/changed', { entries: [{ queue: 'shared' }] }, { 'x-tenant': 'initech' })
      expect(none.body.entries[0].error).toBe('QUEUE_NOT_FOUND')
    } finally {
      await tenants.close()
    }
  })
})
