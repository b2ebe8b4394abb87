// Configure under parallel clients (ENGINE 10.4, 13): concurrent merges of different options all
// survive, concurrent creates of one name make exactly one row, and racing creators that each set
// a different option all land in it (the loser of the insert merges onto the winner).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'

let app: TestApp
let other: TestApp
beforeAll(async () => {
  app = await testApp()
  // A second app instance over the same database: two replicas of the broker.
  other = await testApp({ database: app.database })
})
afterAll(async () => {
  await other.close()
  await app.close()
})

const INT_OPTIONS = ['priority', 'leaseTime', 'retryLimit', 'retryDelay', 'maxSize', 'ttl', 'delayedProcessing', 'windowBuffer', 'retentionSeconds', 'completedRetentionSeconds', 'maxWaitTimeSeconds', 'minPopWaitTime', 'dedupWindowSeconds'] as const

async function options(queue: string) {
  const rows = await app.database.sql<{ o: Record<string, number> }>('select queen._queue_options(q) as o from queen.queues q where name = $1', [queue])
  return rows.map((r) => r.o)
}

describe('configure concurrency', () => {
  it('keeps every one of many concurrent merges of different options', async () => {
    await app.json('POST', '/api/v1/configure', { queue: 'contended' })
    const answers = await Promise.all(
      INT_OPTIONS.map((key, i) => (i % 2 ? other : app).json('POST', '/api/v1/configure', { queue: 'contended', options: { [key]: 1000 + i } })),
    )
    for (const a of answers) expect(a.status).toBe(200)
    const [row] = await options('contended')
    for (const [i, key] of INT_OPTIONS.entries()) expect(row![key], key).toBe(1000 + i)
  })

  it('creates exactly one row for concurrent creates of one name, and every creator’s option survives', async () => {
    const answers = await Promise.all(
      INT_OPTIONS.map((key, i) => (i % 2 ? other : app).json('POST', '/api/v1/configure', { queue: 'born-once', [key]: 2000 + i })),
    )
    for (const a of answers) expect(a.status).toBe(200)
    expect(new Set(answers.map((a) => a.body.queueId)).size).toBe(1)
    const rows = await options('born-once')
    expect(rows).toHaveLength(1)
    for (const [i, key] of INT_OPTIONS.entries()) expect(rows[0]![key], key).toBe(2000 + i)
  })
})
