// The streams protocol driven the way Queen's JS Stream runtime drives it (test/helpers/stream-
// runner.ts): a tumbling event-time count per key from one queue into another. Run once plainly and
// once with every cycle — acked batches and ack:null flushes alike — replayed twice: both sinks
// hold exactly the windows computed offline, none twice, and both leave the same state behind.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testApp, type TestApp } from '../helpers/app.js'
import { push } from '../helpers/engine.js'
import { offlineWindows, sortWindows, TumblingCounter, type Event, type WindowRow } from '../helpers/stream-runner.js'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

const EVENTS = Number(process.env.QUEEN_STREAMS_EVENTS ?? 2400)
const PARTITIONS = 8
const WINDOW_MS = 1000

// Each key lives on one partition, so a (key, window) is one shard's window; event times grow with
// the push order, so no event is late.
const events: (Event & { partition: string })[] = Array.from({ length: EVENTS }, (_, i) => ({ key: `k${i % PARTITIONS}`, ts: i * 7, partition: `p${i % PARTITIONS}` }))

async function feed(queue: string) {
  for (let i = 0; i < events.length; i += 600) {
    await push(app, events.slice(i, i + 600).map((e) => ({ queue, partition: e.partition, payload: { key: e.key, ts: e.ts } })))
  }
}

/** Every frame of a sink, read by a group of its own. */
async function sinkWindows(queue: string): Promise<WindowRow[]> {
  const rows: WindowRow[] = []
  for (;;) {
    const res = await app.json('GET', `/api/v1/pop/queue/${queue}?batch=1000&partitions=100&consumerGroup=verify&subscriptionMode=all&wait=false`)
    if (res.status === 204) return rows
    rows.push(...res.body.messages.map((m: { data: WindowRow }) => m.data))
  }
}

const send = (method: string, path: string, body?: unknown) => app.json(method, path, body)

describe('a tumbling window count through /streams/v1/*', () => {
  it('emits every window exactly once, with or without every cycle replayed twice', { timeout: 120_000 }, async () => {
    const expected = offlineWindows(events, WINDOW_MS)
    const runs: { sink: WindowRow[]; state: unknown[]; cycles: number }[] = []
    for (const [name, replays] of [['plain', 0], ['replayed', 2]] as const) {
      await feed(`${name}.src`)
      const runner = new TumblingCounter({ send, name, source: `${name}.src`, sink: `${name}.sink`, windowMs: WINDOW_MS, replays })
      await runner.start()
      await runner.drain()
      const sink = await sinkWindows(`${name}.sink`)
      // The state left behind, by source partition name: only each shard's watermark.
      const state = await app.database.sql<{ partition: string; key: string; value: unknown }>(
        `select p.name as partition, s.key, s.value from queen.stream_state s join queen.log_partitions p on p.id = s.partition_id
          where s.query_id = $1 order by 1, 2`,
        [runner.queryId],
      )
      runs.push({ sink, state, cycles: runner.cycles })
    }
    const [plain, replayed] = runs
    expect(plain!.cycles).toBeGreaterThan(PARTITIONS)
    expect(sortWindows(plain!.sink)).toEqual(expected)
    expect(plain!.sink).toHaveLength(expected.length)
    expect(sortWindows(replayed!.sink)).toEqual(expected)
    expect(replayed!.sink).toHaveLength(expected.length)
    expect(replayed!.state).toEqual(plain!.state)
    expect(plain!.state).toEqual(
      Array.from({ length: PARTITIONS }, (_, p) => ({ partition: `p${p}`, key: '__wm__', value: { eventTimeMs: Math.max(...events.filter((e) => e.partition === `p${p}`).map((e) => e.ts)) } })),
    )
  })
})
