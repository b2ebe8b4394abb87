// The cell bench's traffic: open-loop producers that push one message per request on the clock's
// schedule (never waiting on an answer, shedding past the in-flight cap, never retrying), and
// long-polling consumers per tenant in one group that ack what they get. Every request goes over
// one keep-alive agent, so connection setup is not what the loader spends its CPU on.
import { setMaxListeners } from 'node:events'
import http from 'node:http'
import { performance } from 'node:perf_hooks'
import { sleep } from './lib.js'
import { InflightGate, Ledger, dueAt, dueBy, placement } from './cell-ledger.js'

export interface CellShape {
  tenants: number
  partitions: number
  consumersPerTenant: number
  popBatch: number
  popWaitMs: number
  payloadBytes: number
  maxInflight: number
  queue: string
  group: string
  tenantHeader: string
}

export const tenantName = (i: number) => `cell-${String(i).padStart(2, '0')}`
export const partitionName = (i: number) => `p${i}`

/** Requests sent by route over a span, the numerator of calls per delivered message. */
export interface CallCounts {
  push: number
  pop: number
  /** Pops answered 204: a long poll that ended with nothing. */
  popEmpty: number
  ack: number
  /** Answers that were neither success nor 204, and requests that failed on the wire. */
  failed: number
}

export const zeroCalls = (): CallCounts => ({ push: 0, pop: 0, popEmpty: 0, ack: 0, failed: 0 })

interface Answer {
  status: number
  text: string
}

/** The bare HTTP the loader needs: a tenant header, a string body, and an abort for long polls. */
export type RouteKind = 'push' | 'pop' | 'ack'

const kindOf = (path: string): RouteKind | undefined =>
  path === '/api/v1/push' ? 'push' : path.startsWith('/api/v1/pop') ? 'pop' : path === '/api/v1/ack/batch' ? 'ack' : undefined

export class CellHttp {
  private readonly agent: http.Agent
  readonly calls = zeroCalls()
  /** Every answered request's round trip by route, ms, in answer order (a pop's includes its long-poll wait). */
  readonly roundTrips: Record<RouteKind, number[]> = { push: [], pop: [], ack: [] }

  constructor(
    private readonly port: number,
    private readonly tenantHeader: string,
    sockets: number,
  ) {
    // Room for every request the gate lets through plus every consumer, kept open between uses.
    // `timeout` is what makes Node's agent honour the server's `Keep-Alive: timeout=5` hint (it
    // ignores the hint when no timeout is set): without it, a socket idle for the server's 5 s was
    // reused as the server closed it, and that push failed with ECONNRESET. The timeout only
    // closes idle sockets; a request in flight is not cut.
    this.agent = new http.Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets, keepAliveMsecs: 10_000, timeout: 60_000 })
  }

  request(method: 'GET' | 'POST', path: string, tenant: string, body?: string, signal?: AbortSignal): Promise<Answer> {
    const headers: Record<string, string> = { [this.tenantHeader]: tenant }
    if (body !== undefined) {
      headers['content-type'] = 'application/json'
      headers['content-length'] = String(Buffer.byteLength(body))
    }
    const kind = kindOf(path)
    const sentAt = performance.now()
    return new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: this.port, path, method, agent: this.agent, headers, ...(signal ? { signal } : {}) }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          if (kind) this.roundTrips[kind].push(performance.now() - sentAt)
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') })
        })
        res.on('error', reject)
      })
      req.on('error', reject)
      req.end(body)
    })
  }

  close(): void {
    this.agent.destroy()
  }
}

/** Pushes that are not part of the measured schedule (the warm-up) carry k = -1. */
const WARM = -1

/** The padding that brings a payload to about `bytes` bytes of JSON. */
function padFor(bytes: number): string {
  const bare = JSON.stringify({ k: 1_000_000, tn: 10, p: 10, t: 1_000_000.123, pad: '' }).length
  return 'x'.repeat(Math.max(0, bytes - bare))
}

function pushBody(shape: CellShape, pad: string, k: number, tenant: number, partition: number, intendedMs: number): string {
  const payload = `{"k":${k},"tn":${tenant},"p":${partition},"t":${intendedMs.toFixed(3)},"pad":"${pad}"}`
  return `{"items":[{"queue":${JSON.stringify(shape.queue)},"partition":"${partitionName(partition)}","payload":${payload}}]}`
}

/** True when a push answer says its one item was stored (201, status queued). */
function queued(answer: Answer): boolean {
  if (answer.status !== 201) return false
  try {
    const items = JSON.parse(answer.text) as { status?: string }[]
    return items.length === 1 && items[0]!.status === 'queued'
  } catch {
    return false
  }
}

interface PoppedMessage {
  transactionId: string
  partitionId: string
  leaseId: string
  data: { k?: number; tn?: number; t?: number } | null
}

/**
 * The consumers: `consumersPerTenant` long-polling loops per tenant in one group, each popping a
 * batch, recording every message's delivery, then acking the batch. Closed loop by nature (a
 * consumer asks again when it is done), as a real worker pool is. `stop()` aborts the long polls.
 */
export function startConsumers(client: CellHttp, shape: CellShape, ledger: Ledger, errors: string[]) {
  const controller = new AbortController()
  // Every consumer's long poll listens on this one signal; more than Node's default ten is expected.
  setMaxListeners(shape.tenants * shape.consumersPerTenant + 1, controller.signal)
  let stopping = false
  let warmAcked = 0
  const path = `/api/v1/pop/queue/${encodeURIComponent(shape.queue)}?consumerGroup=${encodeURIComponent(shape.group)}&subscriptionMode=all&batch=${shape.popBatch}&wait=true&timeout=${shape.popWaitMs}`
  const note = (what: string) => {
    client.calls.failed++
    if (errors.length < 20) errors.push(what)
  }
  const consumer = async (tenant: number) => {
    const name = tenantName(tenant)
    while (!stopping) {
      let answer: Answer
      try {
        client.calls.pop++
        answer = await client.request('GET', path, name, undefined, controller.signal)
      } catch (error) {
        if (stopping) return
        note(`pop: ${error instanceof Error ? error.message : String(error)}`)
        await sleep(100)
        continue
      }
      if (answer.status === 204) {
        client.calls.popEmpty++
        continue
      }
      if (answer.status !== 200) {
        note(`pop answered ${answer.status}: ${answer.text.slice(0, 200)}`)
        await sleep(100)
        continue
      }
      const at = performance.now()
      const messages = (JSON.parse(answer.text) as { messages: PoppedMessage[] }).messages
      let warm = 0
      for (const m of messages) {
        const d = m.data
        if (d && typeof d.k === 'number' && d.k !== WARM) ledger.deliver(d.k, tenant, d.t ?? NaN, at)
        else warm++
      }
      if (messages.length === 0) continue
      const body = JSON.stringify({
        acknowledgments: messages.map((m) => ({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, status: 'completed' })),
        consumerGroup: shape.group,
      })
      try {
        client.calls.ack++
        const ack = await client.request('POST', '/api/v1/ack/batch', name, body)
        if (ack.status !== 200) note(`ack answered ${ack.status}: ${ack.text.slice(0, 200)}`)
        else if ((JSON.parse(ack.text) as { success: boolean }[]).some((r) => !r.success)) note(`ack refused: ${ack.text.slice(0, 200)}`)
      } catch (error) {
        if (stopping) return
        note(`ack: ${error instanceof Error ? error.message : String(error)}`)
      }
      warmAcked += warm
    }
  }
  const loops = Array.from({ length: shape.tenants * shape.consumersPerTenant }, (_, i) => consumer(i % shape.tenants))
  return {
    /** Warm-up messages delivered and acked: once all are, the consumers are idle in their long polls. */
    warmAcked: () => warmAcked,
    async stop() {
      stopping = true
      controller.abort()
      await Promise.all(loops)
    },
  }
}

/** One message to every partition of every tenant, outside the schedule, so no partition is created cold under load. */
export async function warmPartitions(client: CellHttp, shape: CellShape): Promise<number> {
  const pad = padFor(shape.payloadBytes)
  const pushes: Promise<void>[] = []
  for (let tenant = 0; tenant < shape.tenants; tenant++) {
    for (let partition = 0; partition < shape.partitions; partition++) {
      pushes.push(
        client.request('POST', '/api/v1/push', tenantName(tenant), pushBody(shape, pad, WARM, tenant, partition, 0)).then((a) => {
          if (!queued(a)) throw new Error(`warm-up push answered ${a.status}: ${a.text.slice(0, 200)}`)
        }),
      )
    }
  }
  await Promise.all(pushes)
  return pushes.length
}

/**
 * The warm-up load: the same open-loop pushes at `rate` for `ms`, every message marked warm so the
 * ledger never sees it (the consumers ack it and count it as warm). What it warms is what a broker
 * that has been serving meets and a fresh one does not: the pool's connections and their compiled
 * procedures, the loader's sockets, the JIT. Resolves with the number of warm messages stored.
 */
export async function warmLoad(client: CellHttp, shape: CellShape, gate: InflightGate, rate: number, ms: number): Promise<number> {
  const pad = padFor(shape.payloadBytes)
  const total = Math.max(1, Math.round((rate * ms) / 1000))
  const start = performance.now()
  const sent: Promise<boolean>[] = []
  for (let k = 0; k < total; ) {
    const due = dueBy(performance.now() - start, rate, total)
    for (; k < due; k++) {
      if (!gate.tryEnter()) continue
      const { tenant, partition } = placement(k, shape.tenants, shape.partitions)
      sent.push(
        client.request('POST', '/api/v1/push', tenantName(tenant), pushBody(shape, pad, WARM, tenant, partition, 0)).then(
          (answer) => (gate.leave(), queued(answer)),
          () => (gate.leave(), false),
        ),
      )
    }
    if (k < total) await sleep(Math.max(0, start + dueAt(k, rate) - performance.now()))
  }
  return (await Promise.all(sent)).filter(Boolean).length
}

export interface Pacer {
  /** Resolves when every message of the window has had its turn (sent or shed). */
  done: Promise<void>
  /** The largest gap seen between a message's intended and actual send time, ms: the loader falling behind. */
  maxLagMs(): number
  /** Messages whose turn has come so far. */
  offered(): number
}

/**
 * The producers: message k is due at start + k / rate whatever happened to the earlier ones; each
 * due message is sent at once if the gate has room (its answer is awaited by nobody but the
 * ledger) or shed. A push is never retried. `start` is on performance.now()'s clock.
 */
export function runPacer(client: CellHttp, shape: CellShape, ledger: Ledger, gate: InflightGate, options: { rate: number; total: number; start: number }, errors: string[]): Pacer {
  const pad = padFor(shape.payloadBytes)
  let k = 0
  let maxLag = 0
  const send = (id: number, intended: number) => {
    ledger.offer(id, intended)
    if (!gate.tryEnter()) return
    const { tenant, partition } = placement(id, shape.tenants, shape.partitions)
    client.calls.push++
    client.request('POST', '/api/v1/push', tenantName(tenant), pushBody(shape, pad, id, tenant, partition, intended)).then(
      (answer) => {
        gate.leave()
        if (queued(answer)) ledger.accept(id)
        else {
          ledger.refuse(id)
          client.calls.failed++
          if (errors.length < 20) errors.push(`push answered ${answer.status}: ${answer.text.slice(0, 200)}`)
        }
      },
      (error: unknown) => {
        gate.leave()
        ledger.refuse(id)
        client.calls.failed++
        if (errors.length < 20) errors.push(`push: ${error instanceof Error ? error.message : String(error)}`)
      },
    )
  }
  const done = (async () => {
    const { rate, total, start } = options
    while (k < total) {
      const now = performance.now()
      const due = dueBy(now - start, rate, total)
      for (; k < due; k++) {
        const intended = start + dueAt(k, rate)
        if (now - intended > maxLag) maxLag = now - intended
        send(k, intended)
      }
      if (k >= total) break
      // A timer, not a busy loop: answers are handled while we wait, and a late wake-up only
      // sends more at once (their delay still counts from their intended time).
      await sleep(Math.max(0, start + dueAt(k, rate) - performance.now()))
    }
  })()
  return { done, maxLagMs: () => maxLag, offered: () => k }
}
