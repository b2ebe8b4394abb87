// The SQL helpers every procedure leans on: UUIDv7 carries its millisecond timestamp and version
// (D17), and the UUID check accepts exactly the canonical form, so a malformed id is "not found".
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase, type TestDatabase } from './helpers/database.js'

let db: TestDatabase
beforeAll(async () => {
  db = await freshDatabase()
})
afterAll(() => db.drop())

describe('SQL helpers', () => {
  it('_uuid_v7 embeds the Unix milliseconds of its instant, with version 7 and the RFC variant', async () => {
    const [r] = await db.sql<{ u: string }>(`select queen._uuid_v7('2026-12-03T07:55:00.123Z')::text as u`)
    expect(parseInt(r!.u.replace(/-/g, '').slice(0, 12), 16)).toBe(Date.parse('2026-12-03T07:55:00.123Z'))
    expect(r!.u).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    const [two] = await db.sql<{ a: string; b: string }>(`select queen._uuid_v7()::text as a, queen._uuid_v7()::text as b`)
    expect(two!.a).not.toBe(two!.b)
  })

  it('_is_uuid accepts canonical UUIDs in either case and nothing else', async () => {
    const rows = await db.sql<{ t: string; ok: boolean }>(`
      select t, queen._is_uuid(t) as ok from unnest(array['0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', '0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B',
        'not-a-uuid', '0190a1b2c3d47e5f8a9b0c1d2e3f4a5b', '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5', '']) t`)
    expect(rows.map((r) => r.ok)).toEqual([true, true, false, false, false, false])
  })
})
