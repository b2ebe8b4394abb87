// The sink's committed pointer in namespace queen.sink of the key/value store: moved only by
// sink_commit_v1 under the lease and a compare-and-set on the row's version, so of two writers that
// read the same version exactly one wins, and a write made since the read (another commit, an
// operator's rewind) makes the stale one fail instead of overwriting it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { databaseSource, POINTER_NAMESPACE, pointerKey } from '../../src/sink/source.js'
import { testApp, type TestApp } from '../helpers/app.js'
import { putPointerValue } from '../helpers/sink.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

const source = () => databaseSource(app.db, app.config, '')
const TOKEN = '0190b7a5-0000-7000-8000-00000000000a'
const commit = (queue: string, windowEnd: string, expectVersion: number, token = TOKEN) =>
  source().commit('cas', queue, token, 60, windowEnd, { frames: 1 }, expectVersion)

describe('the sink pointer', () => {
  it('lets exactly one of two writers that read the same version move it', async () => {
    expect(await source().claim('cas', 'race', TOKEN, 60)).toBe(true)
    for (let round = 0; round < 20; round++) {
      const { version } = await source().pointer('cas', 'race')
      const ends = [1, 2].map((n) => new Date(Date.UTC(2026, 0, 1, 0, round, n)).toISOString())
      const answers = await Promise.all(ends.map((end) => commit('race', end, version)))
      const won = answers.filter((a) => a.committed)
      expect(won, `round ${round}`).toHaveLength(1)
      const lost = answers.find((a) => !a.committed)!
      expect(lost, `round ${round}`).toMatchObject({ reason: 'version', windowEnd: won[0]!.windowEnd, version: won[0]!.version })
      expect(won[0]!.version).toBeGreaterThan(version)
      expect(await source().pointer('cas', 'race')).toEqual({ windowEnd: won[0]!.windowEnd, version: won[0]!.version })
    }
  })

  it('refuses a commit whose version was overtaken by another write, leaving that write in place', async () => {
    expect(await source().claim('cas', 'stale', TOKEN, 60)).toBe(true)
    const first = await commit('stale', '2026-01-01T00:01:00.000Z', 0)
    expect(first).toMatchObject({ committed: true, reason: null, windowEnd: '2026-01-01T00:01:00.000Z' })
    // Absent is version 0: a writer that saw no pointer cannot overwrite the one committed since.
    expect(await commit('stale', '2026-01-01T00:02:00.000Z', 0)).toMatchObject({ committed: false, reason: 'version', version: first.version })
    // An operator rewinds it out of band: the writer still holding the old version loses.
    await putPointerValue(app, pointerKey('cas', 'stale'), { windowEnd: '2026-01-01T00:00:30.000Z' })
    const rewound = await source().pointer('cas', 'stale')
    expect(rewound.windowEnd).toBe('2026-01-01T00:00:30.000Z')
    expect(await commit('stale', '2026-01-01T00:02:00.000Z', first.version)).toMatchObject({ committed: false, reason: 'version', version: rewound.version })
    expect(await commit('stale', '2026-01-01T00:02:00.000Z', rewound.version)).toMatchObject({ committed: true })
  })

  it('checks the lease before the version and never moves backwards', async () => {
    expect(await source().claim('cas', 'order', TOKEN, 60)).toBe(true)
    const at = await commit('order', '2026-01-01T00:05:00.000Z', 0)
    const other = '0190b7a5-0000-7000-8000-00000000000b'
    expect(await commit('order', '2026-01-01T00:06:00.000Z', 12345, other)).toMatchObject({ committed: false, reason: 'lease_lost', version: at.version })
    expect(await commit('order', '2026-01-01T00:04:00.000Z', at.version)).toMatchObject({ committed: false, reason: 'behind', windowEnd: '2026-01-01T00:05:00.000Z' })
  })

  it('is stored without expiry in the broker namespace, where retention reads it', async () => {
    const [row] = await app.database.sql<{ ns: string; expires_at: Date | null; value: unknown }>(
      `select ns, expires_at, value from queen.kv_entries where key = $1`,
      [pointerKey('cas', 'order')],
    )
    expect(row).toEqual({ ns: POINTER_NAMESPACE, expires_at: null, value: { windowEnd: '2026-01-01T00:05:00.000Z' } })
    const [end] = await app.database.sql<{ at: Date }>(`select queen._kv_committed_end('', $1, now()) as at`, [pointerKey('cas', 'order')])
    expect(end!.at.toISOString()).toBe('2026-01-01T00:05:00.000Z')
  })

  it('treats a pointer row past its expiry as absent, as every read of the store does', async () => {
    const key = pointerKey('cas', 'expiring')
    await putPointerValue(app, key, { windowEnd: '2026-01-01T00:00:00.000Z' })
    await app.database.sql(`update queen.kv_entries set expires_at = '2026-06-01T00:00:00Z' where ns = $1 and key = $2`, [POINTER_NAMESPACE, key])
    const at = (now: string) =>
      app.database.sql<{ at: Date | null }>(`select queen._kv_committed_end('', $1, $2::timestamptz) as at`, [key, now]).then((r) => r[0]!.at)
    expect(await at('2026-05-31T23:59:59Z')).toEqual(new Date('2026-01-01T00:00:00.000Z'))
    expect(await at('2026-06-01T00:00:00Z')).toBeNull()
    expect(await app.db.call('sink_pointer_v1', { tenant: '', sink: 'cas', queue: 'expiring', now: new Date('2026-06-01T00:00:00Z') })).toBeNull()
  })
})
