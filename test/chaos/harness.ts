// The chaos harness: the real Node broker as a child process (`node --import tsx src/node.ts`,
// what `npm start` runs) on a port of its own, a steady load of producers and consumers talking to
// it over HTTP as a Queen SDK would (retrying what API §6.13 says is safe to retry), and the
// ledger oracle recording everything. Faults are injected by the scenarios; this file only starts,
// kills and restarts, loads, and measures. QUEEN_CHAOS=full selects the long variants.
import { spawn, type ChildProcess } from 'node:child_process'
import pg from 'pg'
import { freePort } from '../../src/db/embedded.js'
import { failures, Ledger, rng, type Report, type Round } from './ledger.js'

export const FULL = process.env.QUEEN_CHAOS === 'full'
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

export interface Broker {
  readonly base: string
  readonly port: number
  output(): string
  /** SIGKILL: no drain, no goodbye; in-flight requests and leases are simply cut. */
  kill(): Promise<void>
  /** Starts the process again on the same port and waits for /health to answer (any status). */
  restart(): Promise<void>
  /** SIGTERM and wait. */
  stop(): Promise<void>
}

export async function startBroker(databaseUrl: string, env: Record<string, string> = {}): Promise<Broker> {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  let child: ChildProcess | undefined
  let output = ''
  const launch = async () => {
    const childEnv: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), LOG_LEVEL: 'warn', DB_POOL_SIZE: '6', ...env }
    if (env.QUEEN_TENANCY_HEADER === undefined) delete childEnv.QUEEN_TENANCY_HEADER
    const c = spawn(process.execPath, ['--import', 'tsx', 'src/node.ts'], { cwd: new URL('../..', import.meta.url), env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] })
    child = c
    c.stdout!.on('data', (d) => (output = (output + String(d)).slice(-20_000)))
    c.stderr!.on('data', (d) => (output = (output + String(d)).slice(-20_000)))
    const deadline = Date.now() + 60_000
    for (;;) {
      const res = await fetch(`${base}/health`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined)
      if (res) {
        await res.body?.cancel()
        return
      }
      if (c.exitCode !== null || Date.now() > deadline) throw new Error(`broker did not start:\n${output}`)
      await sleep(100)
    }
  }
  const exit = async (signal: NodeJS.Signals) => {
    const c = child
    if (!c || c.exitCode !== null || c.signalCode !== null) return
    const exited = new Promise((done) => c.once('exit', done))
    c.kill(signal)
    await exited
  }
  await launch()
  return { base, port, output: () => output, kill: () => exit('SIGKILL'), restart: launch, stop: () => exit('SIGTERM') }
}

export interface Answer {
  /** 0 when no answer came (connection refused or reset, timeout). */
  status: number
  body: any
  headers: Headers | null
  error?: string
}

export async function call(base: string, method: string, path: string, body?: unknown, timeoutMs = 15_000, headers: Record<string, string> = {}): Promise<Answer> {
  try {
    const res = await fetch(base + path, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    })
    const text = await res.text()
    let parsed: unknown = null
    try {
      parsed = text ? JSON.parse(text) : null
    } catch {
      parsed = text
    }
    return { status: res.status, body: parsed, headers: res.headers }
  } catch (error) {
    return { status: 0, body: null, headers: null, error: (error as Error).message }
  }
}

/**
 * A call with the retry rule of Queen's SDK HTTP clients: network errors and 5xx are retried (here
 * until the broker is back from a kill, at most a minute), 4xx are not.
 */
export function callUntilBack(broker: () => string, timeoutMs: number) {
  return async (method: string, path: string, body?: unknown): Promise<Answer> => {
    const deadline = Date.now() + 60_000
    for (let wait = 100; ; wait = Math.min(wait * 2, 1000)) {
      const res = await call(broker(), method, path, body, timeoutMs)
      if ((res.status !== 0 && res.status < 500) || Date.now() > deadline) return res
      await sleep(wait)
    }
  }
}

export interface LoadOptions {
  base: () => string
  /** Direct connection to the broker's database, for the settle check. */
  databaseUrl: string
  /** More databases the queue's tenant may live on (docs/placement.md): settle and DLQ read them all. */
  otherDatabaseUrls?: string[]
  /** The tenant the load runs as (sent in `headers`); '' without tenancy. */
  tenant?: string
  /** Sent on every request (the tenancy header). */
  headers?: Record<string, string>
  queue: string
  partitions?: number
  producers?: number
  consumers?: number
  /** Largest push batch (items) and pop batch. */
  pushBatch?: number
  popBatch?: number
  seed?: number
}

export interface LoadStats {
  requests: number
  noAnswer: number
  /** 503 answers, all of which carried db_unavailable (or another documented 503 code) and Retry-After. */
  retryable503: number
  /** The codes those 503s carried. */
  codes503: Record<string, number>
  /** Any 5xx that is not a documented 503 with Retry-After, or any unexpected 4xx: defects. */
  unexpected: string[]
  retriedAcks: number
  retriedAckResults: Record<string, number>
  /** Client clock (performance.now()) when each 201 push and 200 ack was sent and answered. */
  pushOk: [number, number][]
  ackOk: [number, number][]
}

/**
 * A steady load: producers push one batch at a time, retrying a batch with the same transactionIds
 * until it is answered 201 (so an ambiguous commit comes back `duplicate`); consumers long-poll
 * and ack completed, and repeat an ack whose answer was lost once (harmless by API §6.13).
 */
export class Load {
  readonly ledger = new Ledger()
  readonly stats: LoadStats = { requests: 0, noAnswer: 0, retryable503: 0, codes503: {}, unexpected: [], retriedAcks: 0, retriedAckResults: {}, pushOk: [], ackOk: [] }
  private producing = true
  private running: Promise<void>[] = []
  private producersDone: Promise<void> = Promise.resolve()
  readonly o: Required<LoadOptions>
  private admins: pg.Pool[]

  constructor(options: LoadOptions) {
    this.o = { partitions: 6, producers: 3, consumers: 4, pushBatch: 10, popBatch: 20, seed: 1, otherDatabaseUrls: [], tenant: '', headers: {}, ...options }
    this.admins = [options.databaseUrl, ...this.o.otherDatabaseUrls].map((url) => {
      const pool = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 2000 })
      pool.on('error', () => {})
      return pool
    })
  }

  /** One query over every database, rows concatenated. */
  private async everywhere(text: string, values: unknown[]): Promise<any[]> {
    return (await Promise.all(this.admins.map((a) => a.query(text, values)))).flatMap((r) => r.rows)
  }

  private async send(method: string, path: string, body?: unknown): Promise<Answer> {
    const a = await call(this.o.base(), method, path, body, 15_000, this.o.headers)
    this.stats.requests++
    if (a.status === 0) this.stats.noAnswer++
    else if (a.status === 503 && a.headers?.get('retry-after') && typeof a.body?.code === 'string') {
      this.stats.retryable503++
      this.stats.codes503[a.body.code] = (this.stats.codes503[a.body.code] ?? 0) + 1
    }
    else if (a.status >= 400) {
      if (this.stats.unexpected.length < 50) this.stats.unexpected.push(`${method} ${path} → ${a.status} ${JSON.stringify(a.body).slice(0, 200)}`)
    }
    return a
  }

  start(): void {
    const producers = Array.from({ length: this.o.producers }, (_, w) => this.producer(w))
    this.producersDone = Promise.all(producers).then(() => {})
    this.running = [this.producersDone, ...Array.from({ length: this.o.consumers }, (_, n) => this.consumer(n))]
  }

  private async producer(w: number): Promise<void> {
    const rand = rng(this.o.seed * 1000 + w)
    let seq = 0
    while (this.producing) {
      const n = 1 + Math.floor(rand() * this.o.pushBatch)
      const items = Array.from({ length: n }, () => {
        const s = seq++
        return { queue: this.o.queue, partition: `p${Math.floor(rand() * this.o.partitions)}`, transactionId: `w${w}-${s}`, payload: { w, s } }
      })
      for (;;) {
        const sentAt = performance.now()
        const a = await this.send('POST', '/api/v1/push', { items })
        if (a.status === 201) {
          this.stats.pushOk.push([sentAt, performance.now()])
          ;(a.body as { status: string; offset: number }[]).forEach((r, i) => {
            const item = items[i]!
            this.ledger.pushed({ producer: `w${w}`, seq: item.payload.s, partition: item.partition, transactionId: item.transactionId }, r)
          })
          break
        }
        // A 503 normally means nothing was written (API 2.3), but not when only the commit's answer
        // was lost between PostgreSQL and the broker: the client cannot tell, so neither does the ledger.
        if (a.status === 0 || a.status === 503) this.ledger.pushUnknown(n)
        if (a.status !== 0 && a.status !== 503) break // recorded as unexpected; a deterministic refusal is not retried
        await sleep(100 + rand() * 200)
      }
    }
  }

  private async consumer(n: number): Promise<void> {
    const rand = rng(this.o.seed * 7777 + n)
    for (;;) {
      const batch = 1 + Math.floor(rand() * this.o.popBatch)
      const a = await this.send('GET', `/api/v1/pop/queue/${encodeURIComponent(this.o.queue)}?batch=${batch}&wait=true&timeout=500`)
      const popAt = performance.now()
      if (a.status === 200) {
        const messages = a.body.messages as { transactionId: string; partitionId: string; partition: string; leaseId: string; offset: number; retryCount: number }[]
        const round = this.ledger.popped(messages[0]!.partition, '__QUEUE_MODE__', messages[0]!.leaseId, messages.map((m) => ({ transactionId: m.transactionId, offset: m.offset, retryCount: m.retryCount })), popAt)
        // Half the rounds ack as Queen's clients do, by transaction id alone: the common set-based
        // ack, fused across leases under load; the other half name offsets (the general path).
        await this.ack(round, messages, rand() < 0.5)
        continue
      }
      if (a.status === 0 || a.status === 503) this.ledger.popUnknown()
      if (a.status !== 204) {
        await sleep(100 + rand() * 200)
        continue
      }
      if (!this.producing && (await this.producersSettled()) && (await this.settled())) return
    }
  }

  private async ack(round: Round, messages: { transactionId: string; partitionId: string; leaseId: string; offset: number }[], withOffsets: boolean): Promise<void> {
    const body = {
      acknowledgments: messages.map((m) => ({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, ...(withOffsets ? { offset: m.offset } : {}), status: 'completed' })),
    }
    round.ackAt = performance.now()
    let sentAt = round.ackAt
    let a = await this.send('POST', '/api/v1/ack/batch', body)
    if (a.status !== 200) {
      round.ackUnknown = true
      // The SDK's retry: same body, same lease. Frames the first attempt settled answer success
      // with alreadyAcked; a lease that expired meanwhile is refused.
      await sleep(200)
      this.stats.retriedAcks++
      sentAt = performance.now()
      a = await this.send('POST', '/api/v1/ack/batch', body)
      const firstItem = a.status === 200 ? (a.body as { success: boolean; code: string | null }[])[0] : undefined
      const outcome = firstItem ? (firstItem.success ? 'success' : String(firstItem.code)) : String(a.status)
      this.stats.retriedAckResults[outcome] = (this.stats.retriedAckResults[outcome] ?? 0) + 1
      if (a.status !== 200) return
    }
    this.stats.ackOk.push([sentAt, performance.now()])
    ;(a.body as { success: boolean; code: string | null }[]).forEach((r, i) => {
      if (r.success) round.completed.push(messages[i]!.offset)
      else if (r.code === 'lease_invalid' || r.code === 'lease_expired' || r.code === 'lease_not_found') round.leaseLost = true
      else this.stats.unexpected.push(`ack item ${messages[i]!.offset} → ${r.code}`)
    })
    // A per-item success confirms the frame settled, whichever attempt applied it: a retry of an
    // ack that had applied answers success with alreadyAcked (issue #20). A failure confirms nothing.
  }

  private async producersSettled(): Promise<boolean> {
    return Promise.race([this.producersDone.then(() => true), sleep(0).then(() => false)])
  }

  /** Every partition of the queue settled in queue mode: cursor at the end, nothing acked above it. */
  async settled(): Promise<boolean> {
    try {
      const rows = await this.everywhere(
        `select count(*) filter (where c.partition_id is null or c.committed_offset <> p.last_offset + 1 or cardinality(c.acked_set) > 0)::int as open
           from queen.log_partitions p join queen.queues q on q.id = p.queue_id
           left join queen.log_consumers c on c.partition_id = p.id and c.consumer_group = '__QUEUE_MODE__'
          where q.name = $1 and q.tenant_id = $2`,
        [this.o.queue, this.o.tenant],
      )
      return rows.every((r) => r.open === 0)
    } catch {
      return false
    }
  }

  /** Stops producing, lets every batch in flight resolve, and waits for the consumers to drain. */
  async finish(timeoutMs = 120_000): Promise<void> {
    this.producing = false
    const done = Promise.all(this.running)
    const timer = sleep(timeoutMs).then(() => 'timeout' as const)
    const result = await Promise.race([done, timer])
    if (result === 'timeout') throw new Error(`load did not drain within ${timeoutMs} ms: ${JSON.stringify(this.summary())}`)
  }

  async dlq(): Promise<{ partition: string; offset: number }[]> {
    return this.everywhere(
      `select d.partition_name as partition, d.frame_offset::int as offset from queen.log_dlq d join queen.queues q on q.id = d.queue_id where q.name = $1 and q.tenant_id = $2`,
      [this.o.queue, this.o.tenant],
    )
  }

  async check(retryLimit: number): Promise<Report> {
    const report = this.ledger.check({ dlq: await this.dlq(), retryLimit })
    await Promise.all(this.admins.map((a) => a.end()))
    return report
  }

  /**
   * Recovery after a fault ended at t: milliseconds from t until the first 201 push and the first
   * 200 ack among requests sent at or after t (-1: none came).
   */
  recovery(t: number): { push: number; ack: number } {
    const first = (list: [number, number][]) => {
      const done = list.filter(([sent]) => sent >= t).map(([, d]) => d)
      return done.length ? Math.round(Math.min(...done) - t) : -1
    }
    return { push: first(this.stats.pushOk), ack: first(this.stats.ackOk) }
  }

  summary() {
    const { pushOk, ackOk, ...rest } = this.stats
    return { ...rest, pushes: pushOk.length, acks: ackOk.length, acknowledged: this.ledger.acked.size, rounds: this.ledger.rounds.length }
  }
}

export interface ScenarioResult {
  scenario: string
  variant: 'full' | 'short'
  seconds: number
  faults: number
  recoveryMs: { push: number; ack: number }[]
  report: Report
  load: ReturnType<Load['summary']>
  notes: Record<string, unknown>
}

/** Prints one line a person (and docs/reliability.md) can read, and returns the failing counts. */
export function summarise(result: ScenarioResult): Record<string, number> {
  const r = result.report
  const worst = (k: 'push' | 'ack') => (result.recoveryMs.length ? String(Math.max(...result.recoveryMs.map((m) => m[k]))) : 'n/a')
  console.log(
    `[chaos] ${result.scenario} (${result.variant}, ${result.seconds.toFixed(0)} s, ${result.faults} faults): ` +
      `acknowledged ${r.acknowledged}, lost ${r.lost}, duplicated ${r.duplicateMessages}, out-of-order ${r.outOfOrder}, ` +
      `redelivered ${r.redeliveries} (unexplained ${r.unexplainedDuplicates}), dlq ${r.dlq} (unexplained ${r.unexplainedDlq}), ` +
      `duplicate answers ${r.duplicateAnswers}, unknown pushes ${r.unknownPushes}, lost pop answers ${r.lostPopAnswers}; ` +
      `requests ${result.load.requests}, no answer ${result.load.noAnswer}, 503 ${result.load.retryable503}, unexpected ${result.load.unexpected.length}; ` +
      `recovery (first success sent after the fault ended) worst push ${worst('push')} ms, ack ${worst('ack')} ms; ${JSON.stringify(result.notes)}` +
      (r.problems.length ? `\n  problems: ${r.problems.slice(0, 5).join('; ')}` : '') +
      (result.load.unexpected.length ? `\n  unexpected: ${result.load.unexpected.slice(0, 5).join('; ')}` : ''),
  )
  return failures(r)
}

export interface HealthSample {
  sentAt: number
  doneAt: number
  status: number
  database: string | null
}

/** Samples GET /health every intervalMs until stopped. */
export function watchHealth(base: () => string, intervalMs = 200) {
  const samples: HealthSample[] = []
  let on = true
  const loop = (async () => {
    while (on) {
      const sentAt = performance.now()
      const a = await call(base(), 'GET', '/health', undefined, 5000)
      samples.push({ sentAt, doneAt: performance.now(), status: a.status, database: a.body?.database ?? null })
      await sleep(intervalMs)
    }
  })()
  return {
    samples,
    async stop() {
      on = false
      await loop
    },
  }
}
