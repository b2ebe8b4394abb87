// Maintenance with several databases (QUEEN_DATABASES): each database holds its own flags, so a
// switch must reach every one (a tenant placed elsewhere would otherwise keep pushing), and the
// answer reports each database; one that cannot be reached makes the switch 503, naming it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../src/db/embedded.js'
import { placedApp, type PlacedApp } from './helpers/placed-app.js'

let app: PlacedApp
beforeAll(async () => {
  app = await placedApp({ count: 2 })
  expect((await app.json('PUT', '/api/v1/system/placements/acme', 'ops', { database: 'd1' })).status).toBe(200)
})
afterAll(() => app?.close())

const push = (tenant: string) => app.json('POST', '/api/v1/push', tenant, { items: [{ queue: 'mnt', payload: 1 }] })

describe('maintenance over several databases', () => {
  it('push maintenance switched through any tenant holds the pushes of tenants on every database, and reports each', async () => {
    const on = await app.json('POST', '/api/v1/system/maintenance', 'ops', { enabled: true })
    expect(on.status).toBe(200)
    expect(on.body).toMatchObject({
      maintenanceMode: true,
      databases: [
        { database: 'default', maintenanceMode: true, popMaintenanceMode: false },
        { database: 'd1', maintenanceMode: true, popMaintenanceMode: false },
      ],
    })
    for (const tenant of ['acme', 'initech']) {
      const res = await push(tenant)
      expect(res.status, tenant).toBe(503)
      expect(res.body.code, tenant).toBe('maintenance')
    }
    const read = await app.json('GET', '/api/v1/system/maintenance', 'acme')
    expect(read.body).toMatchObject({ maintenanceMode: true, databases: [{ database: 'default', maintenanceMode: true }, { database: 'd1', maintenanceMode: true }] })

    const off = await app.json('POST', '/api/v1/system/maintenance', 'initech', { enabled: false })
    expect(off.body).toMatchObject({ maintenanceMode: false, databases: [{ maintenanceMode: false }, { maintenanceMode: false }] })
    for (const tenant of ['acme', 'initech']) expect((await push(tenant)).status, tenant).toBe(201)
  })

  it('pop maintenance reaches every database too', async () => {
    const on = await app.json('POST', '/api/v1/system/maintenance/pop', 'ops', { enabled: true })
    expect(on.body).toMatchObject({ popMaintenanceMode: true, databases: [{ database: 'default', popMaintenanceMode: true }, { database: 'd1', popMaintenanceMode: true }] })
    const popped = await app.json('GET', '/api/v1/pop/queue/mnt?wait=false', 'acme')
    expect(popped.status).toBe(204)
    const off = await app.json('POST', '/api/v1/system/maintenance/pop', 'ops', { enabled: false })
    expect(off.body.popMaintenanceMode).toBe(false)
    expect((await app.json('GET', '/api/v1/system/maintenance/pop', 'ops')).body).toMatchObject({ popMaintenanceMode: false, databases: [{ popMaintenanceMode: false }, { popMaintenanceMode: false }] })
  })

  it('answers 503 maintenance_partial with Retry-After, naming a database it could not reach', async () => {
    const down = await placedApp({ count: 2, urls: { d1: `postgres://postgres:x@127.0.0.1:${await freePort()}/nowhere` } })
    try {
      const res = await down.json('POST', '/api/v1/system/maintenance', 'ops', { enabled: true })
      expect(res.status).toBe(503)
      expect(res.headers.get('retry-after')).toBe('1')
      expect(res.body).toEqual({
        error: 'Database d1 could not be reached; retry',
        code: 'maintenance_partial',
        databases: [{ database: 'default', maintenanceMode: true, popMaintenanceMode: false }, { database: 'd1', error: 'unavailable' }],
      })
      await down.json('POST', '/api/v1/system/maintenance', 'ops', { enabled: false }).catch(() => undefined)
    } finally {
      await down.close()
    }
  })
})
