// `npm run bench:autopilot`: a consumer that leaves batch and partitions to the broker (autopilot=true,
// what Queen's 1.2+ JS client sends by default) beside one pinned to batch=100, in the same run and
// at the same time, each its own consumer group reading the same backlog. Prints messages per pop
// and messages per second of each; writes bench/results/autopilot.json. docs/pop-autopilot.md says
// how autopilot sizes a pop.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { closedLoop, round, type HttpClient, type LoopResult } from './lib.js'
import * as queen from './queen.js'
import { ROOT, envInt, log, startStack } from './stack.js'

const QUICK = process.env.BENCH_QUICK === '1'
const settings = {
  backlog: envInt('BENCH_AUTOPILOT_BACKLOG', QUICK ? 40_000 : 400_000),
  partitions: envInt('BENCH_AUTOPILOT_PARTITIONS', 16),
  consumers: envInt('BENCH_AUTOPILOT_CONSUMERS', 4),
  warmupMs: envInt('BENCH_WARMUP_MS', QUICK ? 300 : 1000),
  durationMs: envInt('BENCH_DURATION_MS', QUICK ? 2000 : 8000),
}

const QUEUE = 'autopilot-bench'

/** One pop of `group` with the query a consumer sends, then the ack of what it got. */
async function popAck(client: HttpClient, group: string, sizing: string): Promise<number | 'empty'> {
  const res = await client.request('GET', `/api/v1/pop/queue/${QUEUE}?${sizing}&consumerGroup=${group}&subscriptionMode=all&wait=false`)
  if (res.status === 204) return 'empty'
  if (res.status !== 200) throw new Error(`pop answered ${res.status}: ${JSON.stringify(res.body).slice(0, 200)}`)
  const messages = res.body.messages as { transactionId: string; partitionId: string; leaseId: string }[]
  const ack = await client.request('POST', '/api/v1/ack/batch', {
    acknowledgments: messages.map((m) => ({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, status: 'completed' })),
    consumerGroup: group,
  })
  if (ack.status !== 200) throw new Error(`ack answered ${ack.status}`)
  return messages.length
}

const summary = (name: string, query: string, r: LoopResult) => ({
  consumer: name,
  query,
  pops: r.ops,
  messages: r.items,
  messagesPerPop: r.ops > 0 ? round(r.items / r.ops, 1) : 0,
  messagesPerSec: round(r.itemsPerSec, 0),
  popAckP50Ms: r.p50 === null ? null : round(r.p50, 1),
  drained: r.drained,
})

async function main() {
  const stack = await startStack()
  try {
    const { client } = stack
    await queen.configure(client, QUEUE)
    log(`filling ${settings.backlog} messages over ${settings.partitions} partitions`)
    await queen.fill(client, QUEUE, settings.backlog, settings.partitions)
    const timing = { concurrency: settings.consumers, warmupMs: settings.warmupMs, durationMs: settings.durationMs }
    const consumers = [
      { name: 'autopilot', query: 'autopilot=true' },
      { name: 'pinned batch=100', query: 'batch=100' },
    ]
    log(`${settings.consumers} consumers of each, ${settings.durationMs} ms, at the same time`)
    const results = await Promise.all(
      consumers.map((c, i) => closedLoop({ ...timing, op: () => popAck(client, `group-${i}`, c.query) }).then((r) => summary(c.name, c.query, r))),
    )
    console.table(results)
    const out = join(ROOT, 'bench/results')
    mkdirSync(out, { recursive: true })
    writeFileSync(join(out, 'autopilot.json'), JSON.stringify({ settings, at: new Date().toISOString(), results }, null, 2))
  } finally {
    await stack.stop()
  }
}

await main()
