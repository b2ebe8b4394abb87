// Group administration is tenant-scoped (API 4, ENGINE 1.7): a tenant sees, seeks and deletes only
// its own groups, even when another tenant uses the same group and queue names.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp({ env: { QUEEN_TENANCY_HEADER: 'X-Tenant' } })
})
afterAll(() => app.close())

const A = { 'x-tenant': 'acme' }
const B = { 'x-tenant': 'globex' }

const push = (headers: Record<string, string>, n: number) =>
  app.json('POST', '/api/v1/push', { items: Array.from({ length: n }, (_, i) => ({ queue: 'shared', payload: i })) }, headers)
const popAll = async (headers: Record<string, string>) =>
  (await app.json('GET', '/api/v1/pop/queue/shared?consumerGroup=g&subscriptionMode=all&batch=100', undefined, headers)).body?.messages?.length ?? 0

describe('consumer groups across tenants', () => {
  it('lists, details, seeks and deletes only the caller tenant\'s groups', async () => {
    await push(A, 3)
    await push(B, 5)
    await popAll(A)
    await popAll(B)
    const listA = (await app.json('GET', '/api/v1/consumer-groups', undefined, A)).body as { name: string; totalLag: number }[]
    expect(listA.map((g) => [g.name, g.totalLag])).toEqual([['g', 3]])
    expect(Object.keys((await app.json('GET', '/api/v1/consumer-groups/g', undefined, B)).body)).toEqual(['shared'])
    expect((await app.json('GET', '/api/v1/consumer-groups/g', undefined, B)).body.shared.partitions[0]).toMatchObject({ offsetLag: 5 })

    // A seek in one tenant leaves the other's cursor alone.
    expect((await app.json('POST', '/api/v1/consumer-groups/g/queues/shared/seek', { toEnd: true }, A)).body).toMatchObject({ partitionsUpdated: 1 })
    expect((await app.json('GET', '/api/v1/consumer-groups/g', undefined, B)).body.shared.partitions[0]).toMatchObject({ offsetLag: 5, committedOffset: 0 })
    expect((await app.json('POST', '/api/v1/consumer-groups/g/subscription', { subscriptionTimestamp: '2030-01-01T00:00:00Z' }, A)).body).toMatchObject({ rowsUpdated: 1 })

    // A delete in one tenant removes nothing of the other.
    expect((await app.json('DELETE', '/api/v1/consumer-groups/g', undefined, B)).body).toMatchObject({ deletedPartitions: 1, metadataDeleted: true })
    expect((await app.json('GET', '/api/v1/consumer-groups', undefined, A)).body).toHaveLength(1)
    expect((await app.json('GET', '/api/v1/consumer-groups', undefined, B)).body).toEqual([])
    expect((await app.json('POST', '/api/v1/consumer-groups/g/queues/nowhere/seek', { toEnd: true }, B))).toMatchObject({ status: 404 })
  })
})
