// The broker's workloads, driven over real HTTP exactly as a Queen SDK would call it.
import { performance } from 'node:perf_hooks'
import { closedLoop, percentile, round, sleep, type HttpClient, type LoopResult } from './lib.js'

export const smallPayload = (n: number) => ({ n, t: round(performance.now(), 3) })
export const kbPayload = (n: number) => ({ n, s: 'x'.repeat(1000) })

const rand = (n: number) => Math.floor(Math.random() * n)
export const partitionName = (i: number) => `p${i}`

export async function configure(client: HttpClient, queue: string): Promise<void> {
  const res = await client.request('POST', '/api/v1/configure', { queue, leaseTime: 60, retryLimit: 3 })
  if (res.status !== 200 && res.status !== 201) throw new Error(`configure ${queue} answered ${res.status}: ${JSON.stringify(res.body)}`)
}

async function pushItems(client: HttpClient, items: { queue: string; partition: string; payload: unknown }[]): Promise<void> {
  const res = await client.request('POST', '/api/v1/push', { items })
  if (res.status !== 201) throw new Error(`push answered ${res.status}: ${JSON.stringify(res.body).slice(0, 200)}`)
}

/** Creates every partition (one frame each) so the timed part never pays for first contact. */
export async function createPartitions(client: HttpClient, queue: string, partitions: number): Promise<void> {
  for (let from = 0; from < partitions; from += 5000) {
    const items = []
    for (let i = from; i < Math.min(partitions, from + 5000); i++) items.push({ queue, partition: partitionName(i), payload: smallPayload(i) })
    await pushItems(client, items)
  }
}

/**
 * Settles everything pending with autoAck pops over up to 1000 partitions at a time, so created
 * partitions start the timed part with nothing pending (one call per 1000 partitions, no ack call).
 */
export async function drain(client: HttpClient, queue: string): Promise<number> {
  let total = 0
  for (;;) {
    const res = await client.request('GET', `/api/v1/pop/queue/${encodeURIComponent(queue)}?batch=10000&partitions=1000&autoAck=true`)
    if (res.status === 204) return total
    if (res.status !== 200) throw new Error(`drain pop answered ${res.status}: ${JSON.stringify(res.body).slice(0, 200)}`)
    total += (res.body.messages as unknown[]).length
  }
}

export async function popAck(client: HttpClient, queue: string, batch: number, partitions = 1, group?: string): Promise<number | 'empty'> {
  // A group reads the backlog filled before it first pops, so it asks to start at the oldest message.
  const g = group ? `&consumerGroup=${encodeURIComponent(group)}&subscriptionMode=all` : ''
  const res = await client.request('GET', `/api/v1/pop/queue/${encodeURIComponent(queue)}?batch=${batch}&partitions=${partitions}${g}`)
  if (res.status === 204) return 'empty'
  if (res.status !== 200) throw new Error(`pop answered ${res.status}: ${JSON.stringify(res.body).slice(0, 200)}`)
  const messages = res.body.messages as { transactionId: string; partitionId: string; leaseId: string }[]
  if (messages.length === 0) return 'empty'
  await ackAll(client, messages, group)
  return messages.length
}

async function ackAll(client: HttpClient, messages: { transactionId: string; partitionId: string; leaseId: string }[], group?: string) {
  const ack = await client.request('POST', '/api/v1/ack/batch', {
    acknowledgments: messages.map((m) => ({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, status: 'completed' })),
    ...(group ? { consumerGroup: group } : {}),
  })
  if (ack.status !== 200) throw new Error(`ack answered ${ack.status}: ${JSON.stringify(ack.body).slice(0, 200)}`)
  const failed = (ack.body as { success: boolean }[]).filter((r) => !r.success).length
  if (failed > 0) throw new Error(`${failed} acks were refused`)
}

export interface LoopTiming {
  concurrency: number
  warmupMs: number
  durationMs: number
}

/** Push throughput: each request carries `batch` frames for one random partition of `partitions`. */
export async function pushLoad(client: HttpClient, queue: string, batch: number, partitions: number, payload: (n: number) => unknown, timing: LoopTiming): Promise<LoopResult> {
  let n = 0
  return closedLoop({
    ...timing,
    op: async () => {
      const partition = partitionName(rand(partitions))
      const items = Array.from({ length: batch }, () => ({ queue, partition, payload: payload(n++) }))
      await pushItems(client, items)
      return batch
    },
  })
}

/** Untimed backlog: `count` frames over `partitions` partitions, 1000 per request. */
export async function fill(client: HttpClient, queue: string, count: number, partitions: number, concurrency = 4): Promise<void> {
  let left = count
  let n = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left > 0) {
        const size = Math.min(1000, left)
        left -= size
        const partition = partitionName(rand(partitions))
        await pushItems(client, Array.from({ length: size }, () => ({ queue, partition, payload: smallPayload(n++) })))
      }
    }),
  )
}

export async function popAckLoad(client: HttpClient, queue: string, batch: number, timing: LoopTiming): Promise<LoopResult> {
  let empties = 0
  return closedLoop({
    ...timing,
    op: async () => {
      const got = await popAck(client, queue, batch)
      if (got === 'empty') empties++
      else empties = 0
      return got
    },
    // Several empty answers in a row from a wildcard pop: the backlog is gone.
    isDone: () => empties > timing.concurrency * 3,
  })
}

/**
 * Push → delivered latency at a fixed rate: batch-1 pushes on a timer, long-polling consumers
 * (wait=true) that ack what they get. Each payload carries its send time on this process's clock.
 */
export async function endToEnd(client: HttpClient, queue: string, options: { rate: number; partitions: number; consumers: number; warmupMs: number; durationMs: number }) {
  const latencies: number[] = []
  const start = performance.now()
  const from = start + options.warmupMs
  const to = from + options.durationMs
  let sent = 0
  let stop = false
  const pushes: Promise<void>[] = []
  const producer = (async () => {
    const interval = 1000 / options.rate
    let next = performance.now()
    while (performance.now() < to) {
      const now = performance.now()
      // Catch up after a slow tick instead of drifting: the rate is the schedule, not the loop.
      while (next <= now) {
        pushes.push(pushItems(client, [{ queue, partition: partitionName(rand(options.partitions)), payload: smallPayload(sent++) }]))
        next += interval
      }
      await sleep(Math.max(0, next - performance.now()))
    }
  })()
  const consumer = async () => {
    while (!stop) {
      const res = await client.request('GET', `/api/v1/pop/queue/${encodeURIComponent(queue)}?batch=100&wait=true&timeout=1000`)
      if (res.status === 204) continue
      if (res.status !== 200) throw new Error(`pop answered ${res.status}`)
      const now = performance.now()
      const messages = res.body.messages as { transactionId: string; partitionId: string; leaseId: string; data: { t: number } }[]
      for (const m of messages) if (m.data.t >= from && m.data.t <= to) latencies.push(now - m.data.t)
      await ackAll(client, messages)
    }
  }
  const consumers = Array.from({ length: options.consumers }, consumer)
  await producer
  await Promise.all(pushes)
  await sleep(1500)
  stop = true
  await Promise.all(consumers)
  latencies.sort((a, b) => a - b)
  return { rate: options.rate, delivered: latencies.length, p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: percentile(latencies, 100) }
}

/**
 * Fan-out: a backlog of `messages` frames consumed in full by each of `groups` consumer groups
 * (pop batch 100 + ack, ceil(8 / groups) consumers per group). Deliveries/s counts every group's copy.
 */
export async function fanOut(client: HttpClient, queue: string, options: { groups: number; messages: number; timeoutMs: number }) {
  const perGroup = Math.ceil(8 / options.groups)
  const done = new Array<number>(options.groups).fill(0)
  const t0 = performance.now()
  const deadline = t0 + options.timeoutMs
  const finishedAt = new Array<number>(options.groups).fill(0)
  await Promise.all(
    Array.from({ length: options.groups * perGroup }, async (_, w) => {
      const g = w % options.groups
      const group = `g${g}`
      while (done[g]! < options.messages && performance.now() < deadline) {
        const got = await popAck(client, queue, 100, 1, group)
        if (got === 'empty') await sleep(2)
        else {
          done[g]! += got
          if (done[g]! >= options.messages) finishedAt[g] = performance.now()
        }
      }
    }),
  )
  const delivered = done.reduce((a, b) => a + b, 0)
  const complete = done.every((d) => d >= options.messages)
  const seconds = ((complete ? Math.max(...finishedAt) : performance.now()) - t0) / 1000
  return { groups: options.groups, messages: options.messages, consumers: options.groups * perGroup, seconds: round(seconds, 2), complete, deliveriesPerSec: Math.round(delivered / seconds), messagesPerSec: Math.round(Math.min(...done) / seconds) }
}

/** Batch-1 push and batch-1 pop+ack running together on a queue of `partitions` partitions. */
export async function pushPopLoad(client: HttpClient, queue: string, partitions: number, options: { pushers: number; consumers: number; warmupMs: number; durationMs: number }) {
  let n = 0
  const [pushed, popped] = await Promise.all([
    closedLoop({
      concurrency: options.pushers,
      warmupMs: options.warmupMs,
      durationMs: options.durationMs,
      op: async () => {
        await pushItems(client, [{ queue, partition: partitionName(rand(partitions)), payload: smallPayload(n++) }])
        return 1
      },
    }),
    closedLoop({ concurrency: options.consumers, warmupMs: options.warmupMs, durationMs: options.durationMs, op: () => popAck(client, queue, 1) }),
  ])
  return { partitions, push: pushed, popAck: popped }
}
