// A queue-scoped pop whose queue and group already exist (log_pop_v1's steady state) holds its queue
// row only from its first candidate on: an empty check locks nothing and writes nothing, so long
// polls re-check as reads; and a pop that meets a queue deleted under it starts again and answers as
// a pop after the delete does, instead of failing.
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { ack, acksOf, pop, push } from '../helpers/engine.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(async () => {
  await app.close()
})

/** The queue row's xmax: a row lock taken by a transaction writes its id there. */
async function queueXmax(queue: string): Promise<string> {
  const [row] = await app.database.sql<{ xmax: string }>(`select xmax::text as xmax from queen.queues where tenant_id = '' and name = $1`, [queue])
  return row!.xmax
}

describe('a steady-state pop', () => {
  it('locks and writes nothing when it finds nothing, and holds its queue row once it claims', async () => {
    await push(app, [{ queue: 'steady-empty', payload: 'one' }])
    const first = await pop(app, 'steady-empty', { consumerGroup: 'g', batch: 10, subscriptionMode: 'all' })
    expect(first.messages.map((m) => m.data)).toEqual(['one'])
    await ack(app, acksOf(first.messages), 'g')

    const idle = await queueXmax('steady-empty')
    expect((await pop(app, 'steady-empty', { consumerGroup: 'g', batch: 10, subscriptionMode: 'all' })).status).toBe(204)
    expect(await queueXmax('steady-empty')).toBe(idle)

    await push(app, [{ queue: 'steady-empty', payload: 'two' }])
    const pushed = await queueXmax('steady-empty')
    expect((await pop(app, 'steady-empty', { consumerGroup: 'g', batch: 10, subscriptionMode: 'all' })).messages.map((m) => m.data)).toEqual(['two'])
    expect(await queueXmax('steady-empty')).not.toBe(pushed)
  })

  it('starts again when its queue is deleted before it may hold the row, answering as a pop after the delete', async () => {
    await push(app, [{ queue: 'steady-gone', payload: 'old' }])
    const warm = await pop(app, 'steady-gone', { consumerGroup: 'g', batch: 1, subscriptionMode: 'all' })
    await ack(app, acksOf(warm.messages), 'g')
    await push(app, [{ queue: 'steady-gone', payload: 'doomed' }])
    // The delete holds the queue row until it commits; the pop's walk still sees 'doomed' ready,
    // then waits for the row, which is gone once it may hold it.
    const deleter = new pg.Client({ connectionString: app.database.url })
    await deleter.connect()
    try {
      await deleter.query('begin')
      await deleter.query(`select queen.delete_queue_v1('', 'steady-gone')`)
      const popping = pop(app, 'steady-gone', { consumerGroup: 'g', batch: 10, subscriptionMode: 'all' })
      for (let waited = 0; ; waited += 20) {
        const [row] = await app.database.sql<{ n: number }>(`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like '%log_pop_v1%'`)
        if (row!.n > 0) break
        if (waited > 10_000) throw new Error('the pop never waited for the deleted queue row')
        await new Promise((done) => setTimeout(done, 20))
      }
      await deleter.query('commit')
      expect((await popping).status).toBe(204)
    } finally {
      await deleter.end()
    }
    // As after any first pop: the queue exists again, with the group subscribed, and nothing of the old log.
    const [group] = await app.database.sql<{ mode: string }>(`
      select g.subscription_mode as mode from queen.consumer_groups g join queen.queues q on q.id = g.queue_id
       where q.tenant_id = '' and q.name = 'steady-gone' and g.consumer_group = 'g'`)
    expect(group).toEqual({ mode: 'all' })
    await push(app, [{ queue: 'steady-gone', payload: 'new' }])
    expect((await pop(app, 'steady-gone', { consumerGroup: 'g', batch: 10, subscriptionMode: 'all' })).messages.map((m) => m.data)).toEqual(['new'])
  })
})
