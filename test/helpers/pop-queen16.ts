// Queen 1.6's pop wire, as scenarios that run unchanged on Node (test/http/pop-queen16.test.ts) and
// in workerd (test/edge/pop-queen16.test.ts): a new group starts at the tail, a pop without batch
// takes 200, autopilot sizes what the client left out and says so, leaseSeconds sets the claim's
// lease, and conflation=true is refused, applied, echoed or reported as a conflict as 1.6 does.
import { expect } from 'vitest'

export type Send = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>

interface Message {
  transactionId: string
  partitionId: string
  partition: string
  leaseId: string
  data: any
  offset: number
}

const popPath = (queue: string, query: string) => `/api/v1/pop/queue/${encodeURIComponent(queue)}${query ? `?${query}` : ''}`

async function pushAll(send: Send, queue: string, items: { partition?: string; payload: unknown }[]) {
  for (let i = 0; i < items.length; i += 10_000) {
    const res = await send('POST', '/api/v1/push', { items: items.slice(i, i + 10_000).map((it) => ({ queue, ...it })) })
    expect(res.status).toBe(201)
  }
}

async function ackAll(send: Send, messages: Message[], consumerGroup?: string) {
  const res = await send('POST', '/api/v1/ack/batch', {
    acknowledgments: messages.map((m) => ({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, status: 'completed' })),
    ...(consumerGroup ? { consumerGroup } : {}),
  })
  expect(res.status).toBe(200)
  expect((res.body as { success: boolean }[]).every((r) => r.success)).toBe(true)
}

const seq = (n: number, partition?: string) => Array.from({ length: n }, (_, i) => ({ ...(partition ? { partition } : {}), payload: { i } }))

/** Item 1: where a consumer group starts. */
export async function subscriptionDefault(send: Send, q: string) {
  await pushAll(send, q, seq(3))
  // No subscriptionMode: the group is seeded at the tail and skips the backlog.
  expect((await send('GET', popPath(q, 'consumerGroup=tail&batch=10'))).status).toBe(204)
  expect((await send('GET', popPath(q, 'consumerGroup=tail-alias&subscriptionMode=new-only&batch=10'))).status).toBe(204)
  await pushAll(send, q, [{ payload: { i: 3 } }])
  for (const group of ['tail', 'tail-alias']) {
    const later = await send('GET', popPath(q, `consumerGroup=${group}&batch=10`))
    expect(later.status).toBe(200)
    expect(later.body.messages.map((m: Message) => m.data.i)).toEqual([3])
  }
  // Asked for explicitly, the backlog is read; queue mode always reads everything.
  const all = await send('GET', popPath(q, 'consumerGroup=replay&subscriptionMode=all&batch=10'))
  expect(all.body.messages.map((m: Message) => m.data.i)).toEqual([0, 1, 2, 3])
  const queueMode = await send('GET', popPath(q, 'subscriptionMode=new&batch=10'))
  expect(queueMode.body.messages.map((m: Message) => m.data.i)).toEqual([0, 1, 2, 3])
}

/** Pops and acks until the group is drained; returns the size of every non-empty pop and the last answer. */
async function drain(send: Send, q: string, query: string, group: string) {
  const sizes: number[] = []
  const echoes: unknown[] = []
  for (let round = 0; round < 200; round++) {
    const res = await send('GET', popPath(q, query))
    if (res.status === 204) return { sizes, echoes }
    expect(res.status).toBe(200)
    sizes.push(res.body.messages.length)
    echoes.push(res.body.autopilot)
    await ackAll(send, res.body.messages, group)
  }
  throw new Error('the consumer never drained the queue')
}

/** Item 2: a consumer that sends no batch receives full batches of a 10 000-message backlog. */
export async function defaultBatchFromBacklog(send: Send, q: string) {
  await pushAll(send, q, seq(10_000))
  // An SDK with autopilot off, or an older broker's client, that sends no batch: Queen's 200.
  const plain = await drain(send, q, 'consumerGroup=plain&subscriptionMode=all&wait=false', 'plain')
  expect(plain.sizes).toEqual(Array(50).fill(200))
  expect(plain.echoes.every((e) => e === undefined)).toBe(true)
  // A 1.2+ SDK's default consumer: autopilot=true, no batch, no partitions. One partition holds the
  // whole backlog, so each claim takes the most one sweep may: 1000.
  const auto = await drain(send, q, 'autopilot=true&consumerGroup=auto&subscriptionMode=all&wait=false', 'auto')
  expect(auto.sizes).toEqual(Array(10).fill(1000))
  expect(auto.echoes).toEqual(Array(10).fill({ partitions: 1, batch: 1000, waitMs: 0 }))
}

/** Item 2: autopilot chooses only the knobs left out, and says what it chose. */
export async function autopilotKnobs(send: Send, q: string) {
  for (const p of ['a', 'b', 'c', 'd']) await pushAll(send, q, seq(50, p))
  const pop = (query: string) => send('GET', popPath(q, `${query}&subscriptionMode=all&wait=false`))

  // Nothing pinned: the sweep covers the four ready partitions and the batch their backlog.
  const both = await pop('autopilot=true&consumerGroup=both')
  expect(both.body.autopilot).toEqual({ partitions: 4, batch: 200, waitMs: 0 })
  expect(both.body.messages).toHaveLength(200)
  expect(both.body.partitionsClaimed).toBe(4)

  // partitions pinned to one: kept, and the batch is one partition's backlog.
  const width = await pop('autopilot=true&partitions=1&consumerGroup=width')
  expect(width.body.autopilot).toEqual({ partitions: 1, batch: 50, waitMs: 0 })
  expect(width.body.messages).toHaveLength(50)

  // batch pinned: kept, and the width is chosen.
  const batch = await pop('autopilot=true&batch=30&consumerGroup=batch')
  expect(batch.body.autopilot).toEqual({ partitions: 4, batch: 30, waitMs: 0 })
  expect(batch.body.messages).toHaveLength(30)

  // Both pinned: nothing to choose, the request is the one sent without the flag.
  const pinned = await pop('autopilot=true&batch=30&partitions=2&consumerGroup=pinned')
  expect(pinned.body).not.toHaveProperty('autopilot')
  expect(pinned.body.messages).toHaveLength(30)

  // Queue mode and the partition route accept the flag and keep the defaults (batch 200, one partition).
  const queueMode = await pop('autopilot=true')
  expect(queueMode.body).not.toHaveProperty('autopilot')
  expect(queueMode.body.messages).toHaveLength(50)
  const onePartition = await send('GET', `/api/v1/pop/queue/${q}/partition/b?autopilot=true&consumerGroup=pinned-partition&subscriptionMode=all`)
  expect(onePartition.body).not.toHaveProperty('autopilot')
  expect(onePartition.body.messages).toHaveLength(50)

  // Without the flag the answer is as it always was.
  expect((await pop('consumerGroup=no-flag')).body).not.toHaveProperty('autopilot')
  // partitions=0 is Queen's "no cap".
  expect((await pop('partitions=0&batch=1000&consumerGroup=uncapped')).body.messages).toHaveLength(200)
}

/** Item 2: autopilot=true on a broker that has it switched off or in shadow: today's defaults, no echo. */
export async function autopilotSwitchedOff(send: Send, q: string) {
  for (const p of ['a', 'b']) await pushAll(send, q, seq(300, p))
  const res = await send('GET', popPath(q, 'autopilot=true&consumerGroup=g&subscriptionMode=all&wait=false'))
  expect(res.body).not.toHaveProperty('autopilot')
  expect(res.body.messages).toHaveLength(200)
  expect(res.body.partitionsClaimed).toBe(1)
}

/** leaseSeconds on a pop sets that claim's lease; absent or 0, the queue's leaseTime applies. */
export async function leaseSeconds(send: Send, q: string) {
  expect((await send('POST', '/api/v1/configure', { queue: q, options: { leaseTime: 300 } })).status).toBe(200)
  await pushAll(send, q, seq(3, 'a'))
  await pushAll(send, q, seq(3, 'b'))
  await pushAll(send, q, seq(3, 'c'))
  const leaseEnd = async (query: string) => {
    const popped = await send('GET', `/api/v1/pop/queue/${q}/partition/${query}&batch=10`)
    expect(popped.status).toBe(200)
    const started = Date.now()
    // An extend never shortens a lease, so it answers the lease the pop set (or the queue's, if longer).
    const extended = await send('POST', `/api/v1/lease/${popped.body.leaseId}/extend`, {})
    const item = Array.isArray(extended.body) ? extended.body[0] : extended.body
    return (Date.parse(item.expiresAt) - started) / 1000
  }
  expect(await leaseEnd('a?leaseSeconds=3600')).toBeGreaterThan(3000)
  expect(await leaseEnd('b?leaseSeconds=0')).toBeLessThan(400)
  expect(await leaseEnd('c?consumerGroup=g&subscriptionMode=all')).toBeLessThan(400)
}

/** Item 3: conflation=true as Queen 1.6 answers it. */
export async function conflationWire(send: Send, q: string) {
  // Refused rather than silently degraded.
  for (const [query, text] of [
    ['conflation=true', 'conflation requires a consumerGroup'],
    ['conflation=true&consumerGroup=g&autoAck=true', 'conflation cannot be combined with autoAck=true'],
    ['conflation=true&consumerGroup=g&delivery=all', 'conflation contradicts delivery=all'],
  ] as const) {
    const refused = await send('GET', popPath(q, query))
    expect(refused.status, query).toBe(400)
    expect(refused.body.error, query).toContain(text)
  }

  // An empty conflating pop is a 200 that carries the echo, so the client can tell it was applied.
  const idle = await send('GET', popPath(q, 'conflation=true&consumerGroup=latest&subscriptionMode=all&wait=false'))
  expect(idle.status).toBe(200)
  expect(idle.body).toMatchObject({ messages: [], conflation: true })
  expect(idle.body).not.toHaveProperty('conflationConflict')

  for (const p of ['a', 'b', 'c']) await pushAll(send, q, seq(5, p))
  // No partitions sent: a conflating pop's width is its batch (here 200), at most 64.
  const latest = await send('GET', popPath(q, 'conflation=true&consumerGroup=latest&wait=false'))
  expect(latest.status).toBe(200)
  expect(latest.body.conflation).toBe(true)
  expect(latest.body.messages.map((m: Message) => [m.partition, m.data.i]).sort()).toEqual([['a', 4], ['b', 4], ['c', 4]])
  await ackAll(send, latest.body.messages, 'latest')
  // The policy is the group's: a consumer of it that does not say conflation is still served so.
  await pushAll(send, q, seq(2, 'a'))
  const follower = await send('GET', popPath(q, 'consumerGroup=latest&batch=10&wait=false'))
  expect(follower.body).toMatchObject({ conflation: true })
  expect(follower.body.messages.map((m: Message) => m.data.i)).toEqual([1])
  await ackAll(send, follower.body.messages, 'latest')

  // A group registered without conflation keeps its policy; a conflation=true consumer is told so.
  await send('GET', popPath(q, 'consumerGroup=audit&subscriptionMode=all&batch=1&partitions=1&wait=false'))
  const conflict = await send('GET', popPath(q, 'conflation=true&consumerGroup=audit&batch=100&partitions=3&wait=false'))
  expect(conflict.status).toBe(200)
  expect(conflict.body.conflationConflict).toBe(true)
  expect(conflict.body).not.toHaveProperty('conflation')
  expect(conflict.body.messages.length).toBeGreaterThan(3)
  await ackAll(send, conflict.body.messages, 'audit')
  const drained = await send('GET', popPath(q, 'conflation=true&consumerGroup=fresh-latest&subscriptionMode=new&wait=false'))
  expect(drained.body).toMatchObject({ messages: [], conflation: true })

  // Empty and conflicting: still a 200 with the key.
  await send('GET', popPath(q, 'consumerGroup=plain-idle&subscriptionMode=new&wait=false'))
  const idleConflict = await send('GET', popPath(q, 'conflation=true&consumerGroup=plain-idle&wait=false'))
  expect(idleConflict.status).toBe(200)
  expect(idleConflict.body).toMatchObject({ messages: [], conflationConflict: true })

  // This broker's own spelling stays: delivery=conflate fixes the same policy.
  const alias = await send('GET', popPath(q, 'delivery=conflate&consumerGroup=alias&subscriptionMode=all&partitions=3&batch=10&wait=false'))
  expect(alias.body.conflation).toBe(true)
  expect(alias.body.messages).toHaveLength(3)

  // Pop maintenance: the one answer where `paused` reaches a conflating client.
  expect((await send('POST', '/api/v1/system/maintenance/pop', { enabled: true })).status).toBe(200)
  try {
    const paused = await send('GET', popPath(q, 'conflation=true&consumerGroup=latest&wait=false'))
    expect(paused).toMatchObject({ status: 200, body: { messages: [], paused: true, conflation: true } })
    expect((await send('GET', popPath(q, 'consumerGroup=latest&wait=false'))).status).toBe(204)
  } finally {
    await send('POST', '/api/v1/system/maintenance/pop', { enabled: false })
  }
}

/** Every scenario that runs on a default-configured broker, by name. */
export const scenarios = { subscriptionDefault, defaultBatchFromBacklog, autopilotKnobs, leaseSeconds, conflationWire }
