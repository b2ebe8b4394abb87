// `npm run bench:scale` (issue #22, "Scale"): a backlog of BENCH_SCALE_FRAMES (10 000 000) frames
// over 1 001 partitions built by calling log_push_v1 from SQL in big batches on several connections
// (no HTTP), then with the broker running: push batch 100 and pop+ack batch 100 (16 clients each) on
// a 100 000-frame queue and on the big one, in alternating rounds of one run; one retention pass and
// one retained-bytes pass over the big queue, step by step, at the lanes' own step sizes; and
// GET /api/v1/resources/queues (?stats=cached, then live) with 10 000 queues. Writes
// bench/results/scale.json and prints a summary. The lanes are parked so only this script moves data.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { gunzipSync } from 'node:zlib'
import pg from 'pg'
import { percentile, profiled, round, type HttpClient, type LoopResult } from './lib.js'
import * as queen from './queen.js'
import { PARKED_LANES, ROOT, envInt, log, startStack } from './stack.js'

const settings = {
  frames: envInt('BENCH_SCALE_FRAMES', 10_000_000),
  partitions: 1001,
  smallBacklog: envInt('BENCH_SCALE_SMALL_BACKLOG', 100_000),
  buildConnections: envInt('BENCH_SCALE_BUILD_CONNECTIONS', 4),
  // One call = 10 partitions × 1 000 frames: ten full segments (a segment holds up to 1 000 frames).
  framesPerCall: 10_000,
  clients: 16,
  rounds: envInt('BENCH_SCALE_ROUNDS', 3),
  warmupMs: envInt('BENCH_WARMUP_MS', 1000),
  durationMs: envInt('BENCH_SCALE_WINDOW_MS', 3000),
  statsQueues: envInt('BENCH_SCALE_QUEUES', 10_000),
  statsCalls: envInt('BENCH_SCALE_STATS_CALLS', 200),
  liveCalls: envInt('BENCH_SCALE_LIVE_CALLS', 50),
  // The fraction of the big backlog (the oldest) that the retention pass is set up to delete.
  retentionShare: 0.25,
}
const BIG = 'scale-big'
const SMALL = 'scale-small'

/**
 * Pushes `frames` frames to `queue` through log_push_v1 called in SQL: each call builds its items
 * server-side (generate_series), `perPartition` frames for each of `framesPerCall / perPartition`
 * consecutive partitions, cycling over the 1 001. Returns the wall time and the completion time of
 * every call (to place a retention cutoff inside the backlog).
 */
async function sqlPush(pool: pg.Pool, queue: string, frames: number, perPartition: number, connections: number, firstPartition = 0) {
  const calls: { size: number; first: number }[] = []
  let partition = firstPartition
  for (let left = frames; left > 0; ) {
    const size = Math.min(settings.framesPerCall, left)
    calls.push({ size, first: partition })
    partition = (partition + Math.ceil(size / perPartition)) % settings.partitions
    left -= size
  }
  const doneAt: { at: number; frames: number }[] = []
  let next = 0
  let pushed = 0
  const t0 = performance.now()
  let lastLog = t0
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < calls.length) {
        const c = calls[next++]!
        await pool.query(
          `select queen.log_push_v1('', (
             select jsonb_agg(jsonb_build_object('queue', $1::text, 'partition', 'p' || (($2::int + i / $3::int) % $4::int),
                                                 'data', jsonb_build_object('n', i)))
               from generate_series(0, $5::int - 1) i))`,
          [queue, c.first, perPartition, settings.partitions, c.size],
        )
        pushed += c.size
        doneAt.push({ at: Date.now(), frames: pushed })
        if (performance.now() - lastLog > 15_000) {
          lastLog = performance.now()
          log(`  ${pushed} / ${frames} frames, ${Math.round(pushed / ((lastLog - t0) / 1000))} frames/s`)
        }
      }
    }),
  )
  const seconds = (performance.now() - t0) / 1000
  return { frames, seconds: round(seconds, 1), framesPerSec: Math.round(frames / seconds), doneAt }
}

/** Runs a step procedure until it reports the end of its pass; each step timed on its own. */
async function pass(admin: pg.Client, call: (next: string | null) => Promise<{ processed: number; next: string | null }>) {
  const steps: { ms: number; processed: number; next: string | null }[] = []
  let next: string | null = null
  const t0 = performance.now()
  do {
    const s0 = performance.now()
    const r = await call(next)
    steps.push({ ms: round(performance.now() - s0, 1), processed: Number(r.processed), next: r.next })
    next = r.next
  } while (next !== null)
  const ms = steps.map((s) => s.ms).sort((a, b) => a - b)
  return {
    seconds: round((performance.now() - t0) / 1000, 2),
    steps: steps.length,
    processed: steps.reduce((a, s) => a + s.processed, 0),
    stepMs: { p50: percentile(ms, 50), p99: percentile(ms, 99), max: ms[ms.length - 1] ?? null },
    stepList: steps.length <= 40 ? steps : [...steps.slice(0, 20), ...steps.slice(-20)],
  }
}

async function segmentsOf(admin: pg.Client, queue: string) {
  const { rows } = await admin.query(
    `select count(*)::bigint as segments, coalesce(sum(s.frame_count), 0)::bigint as frames
       from queen.queues q join queen.log_partitions p on p.queue_id = q.id join queen.log_segments s on s.partition_id = p.id
      where q.tenant_id = '' and q.name = $1`,
    [queue],
  )
  return { segments: Number(rows[0].segments), frames: Number(rows[0].frames) }
}

/**
 * Latency of `calls` sequential GETs of `path`, to the answer's last byte: decoding and parsing
 * 2.4 MiB of JSON is the caller's own work (~20 ms here), so it is timed once, apart. With `gzip`
 * the client accepts it (as fetch does) and `bytes` is what crossed the wire.
 */
async function httpLatency(client: HttpClient, path: string, calls: number, gzip = false) {
  const ms: number[] = []
  let bytes = 0
  let queues = 0
  let decodeMs = 0
  let parseMs = 0
  for (let i = 0; i < calls; i++) {
    if (i > 0 && i % 50 === 0) log(`  ${path}: ${i} / ${calls} calls, p50 so far ${percentile([...ms].sort((a, b) => a - b), 50)} ms`)
    const t0 = performance.now()
    const res = await client.requestBytes('GET', path, gzip ? { 'accept-encoding': 'gzip' } : {})
    ms.push(performance.now() - t0)
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}`)
    if (gzip && res.headers['content-encoding'] !== 'gzip') throw new Error(`${path} did not answer gzip`)
    if (i === 0) {
      bytes = res.bytes.byteLength
      const d0 = performance.now()
      const text = (gzip ? gunzipSync(res.bytes) : res.bytes).toString('utf8')
      decodeMs = round(performance.now() - d0, 1)
      const p0 = performance.now()
      queues = (JSON.parse(text).queues as unknown[]).length
      parseMs = round(performance.now() - p0, 1)
    }
  }
  const first = round(ms[0]!, 1)
  ms.sort((a, b) => a - b)
  return { calls, queues, bytes, firstMs: first, clientDecodeMs: decodeMs, clientParseMs: parseMs, p50: percentile(ms, 50), p99: percentile(ms, 99), max: percentile(ms, 100) }
}

async function main() {
  const started = Date.now()
  const stack = await startStack({ brokerEnv: PARKED_LANES })
  const { admin, client } = stack
  const targets = { brokerPid: stack.broker.pid, postmasterPid: stack.postmasterPid, admin, statements: false }
  const out: Record<string, unknown> = { settings, at: new Date().toISOString() }
  const pool = new pg.Pool({ connectionString: stack.url, max: settings.buildConnections, application_name: 'bench-scale-build' })
  try {
    await queen.configure(client, BIG)
    await queen.configure(client, SMALL)

    // ---- the big backlog, by the procedure from SQL
    log(`building ${settings.frames} frames over ${settings.partitions} partitions (${settings.buildConnections} connections, ${settings.framesPerCall} frames a call)`)
    const { result: build, profile: buildProfile } = await profiled(targets, () => sqlPush(pool, BIG, settings.frames, 1000, settings.buildConnections))
    const dbSize = (await admin.query(`select pg_database_size(current_database())::bigint as b`)).rows[0].b
    out.build = { frames: build.frames, seconds: build.seconds, framesPerSec: build.framesPerSec, cpu: buildProfile.cpu, walBytes: buildProfile.wal?.bytes, databaseMB: Math.round(Number(dbSize) / 2 ** 20) }
    log(`built ${build.frames} frames in ${build.seconds} s: ${build.framesPerSec} frames/s, database ${Math.round(Number(dbSize) / 2 ** 20)} MB`)
    await admin.query('analyze')

    log(`small queue: ${settings.smallBacklog} frames (100 a partition)`)
    await sqlPush(pool, SMALL, settings.smallBacklog, 100, settings.buildConnections)
    let smallBacklog = settings.smallBacklog

    // ---- push and pop+ack, small then big inside each round, so drift hits both alike
    const timing = { concurrency: settings.clients, warmupMs: settings.warmupMs, durationMs: settings.durationMs }
    const rounds: { round: number; queue: string; workload: string; result: LoopResult; backlogAtStart: number; cpu: unknown }[] = []
    const refillSmall = async () => {
      if (smallBacklog < settings.smallBacklog) await sqlPush(pool, SMALL, settings.smallBacklog - smallBacklog, 100, settings.buildConnections, Math.floor(Math.random() * settings.partitions))
      smallBacklog = settings.smallBacklog
    }
    let bigBacklog = settings.frames
    for (let r = 1; r <= settings.rounds; r++) {
      for (const workload of ['pop+ack batch 100', 'push batch 100']) {
        for (const q of [SMALL, BIG]) {
          if (q === SMALL) await refillSmall()
          const backlogAtStart = q === SMALL ? smallBacklog : bigBacklog
          const { result, profile } = await profiled(targets, () =>
            workload === 'push batch 100'
              ? queen.pushLoad(client, q, 100, settings.partitions, queen.smallPayload, timing)
              : queen.popAckLoad(client, q, 100, timing),
          )
          const delta = workload === 'push batch 100' ? result.totalItems : -result.totalItems
          if (q === SMALL) smallBacklog += delta
          else bigBacklog += delta
          rounds.push({ round: r, queue: q, workload, result, backlogAtStart, cpu: profile.cpu })
          log(`round ${r} ${workload.padEnd(18)} ${q.padEnd(12)} backlog ${String(backlogAtStart).padStart(9)}  ${String(result.itemsPerSec).padStart(6)} msg/s  p50 ${result.p50} p99 ${result.p99} ms${result.drained ? ' (drained)' : ''}${result.errors ? ` errors ${result.errors}` : ''}`)
        }
      }
    }
    const sum = (q: string, w: string) => rounds.filter((x) => x.queue === q && x.workload === w).reduce((a, x) => a + x.result.items, 0)
    const secs = (q: string, w: string) => rounds.filter((x) => x.queue === q && x.workload === w).reduce((a, x) => a + x.result.seconds, 0)
    const rate = (q: string, w: string) => Math.round(sum(q, w) / secs(q, w))
    const throughput: Record<string, unknown> = {}
    for (const w of ['push batch 100', 'pop+ack batch 100']) {
      throughput[w] = { small: rate(SMALL, w), big: rate(BIG, w), ratio: round(rate(BIG, w) / rate(SMALL, w), 3) }
      log(`${w}: ${rate(SMALL, w)} msg/s at ${settings.smallBacklog}, ${rate(BIG, w)} at ${settings.frames}: ${Math.round((rate(BIG, w) / rate(SMALL, w)) * 100)} %`)
    }
    out.rounds = rounds
    out.throughput = throughput

    // ---- one retention pass: retentionSeconds set so the oldest ~10 % of the build has expired
    const cut = build.doneAt[Math.floor(build.doneAt.length * settings.retentionShare)]!
    const retentionSeconds = Math.max(1, Math.ceil((Date.now() - cut.at) / 1000))
    const res = await client.request('POST', '/api/v1/configure', { queue: BIG, leaseTime: 60, retryLimit: 3, retentionEnabled: true, retentionSeconds })
    if (res.status !== 200 && res.status !== 201) throw new Error(`configure answered ${res.status}: ${JSON.stringify(res.body)}`)
    const before = await segmentsOf(admin, BIG)
    log(`retention pass: retentionSeconds ${retentionSeconds} (about ${cut.frames} of the oldest frames expired), ${before.segments} segments before`)
    const retention = await pass(admin, async (next) => (await admin.query(`select queen.log_retention_step_v1($1, 1000) as r`, [next])).rows[0].r)
    const after = await segmentsOf(admin, BIG)
    out.retention = { retentionSeconds, expiredFramesApprox: cut.frames, limitPerStep: 1000, before, after, ...retention }
    log(`retention: ${retention.steps} steps, ${retention.processed} segments/rows deleted (${before.frames - after.frames} frames) in ${retention.seconds} s; step p50 ${retention.stepMs.p50} ms, p99 ${retention.stepMs.p99} ms, max ${retention.stepMs.max} ms`)

    // ---- one retained-bytes pass (every queue: here the big and the small one)
    const bytes = await pass(admin, async (next) => (await admin.query(`select queen.log_retained_bytes_step_v1($1, 200000) as r`, [next])).rows[0].r)
    out.retainedBytes = { limitPerStep: 200_000, segmentsCounted: after.segments, ...bytes }
    log(`retained bytes: ${bytes.steps} steps, ${bytes.processed} queues, ${after.segments} segments of the big queue, ${bytes.seconds} s; step p50 ${bytes.stepMs.p50} ms, p99 ${bytes.stepMs.p99} ms, max ${bytes.stepMs.max} ms`)
    // The same pass at 1 000 rows a step: a queue far larger than a step, walked over many steps
    // with the resume token, which the backlog here is too small to need at the lane's budget.
    const bytesSmall = await pass(admin, async (next) => (await admin.query(`select queen.log_retained_bytes_step_v1($1, 1000) as r`, [next])).rows[0].r)
    out.retainedBytesSmallSteps = { limitPerStep: 1000, ...bytesSmall }
    log(`retained bytes at 1 000 rows a step: ${bytesSmall.steps} steps, ${bytesSmall.seconds} s; step p50 ${bytesSmall.stepMs.p50} ms, p99 ${bytesSmall.stepMs.p99} ms, max ${bytesSmall.stepMs.max} ms`)

    // ---- 10 000 queues (one frame each, one push call), the stats refresh, then the listing
    const t0 = performance.now()
    await admin.query(
      `select queen.log_push_v1('', (select jsonb_agg(jsonb_build_object('queue', 'sq-' || lpad(i::text, 5, '0'), 'partition', 'Default', 'data', jsonb_build_object('n', i)))
                                      from generate_series(1, $1::int) i))`,
      [settings.statsQueues],
    )
    const createSeconds = round((performance.now() - t0) / 1000, 1)
    // The stats lane's own step size (cron/stats-refresh.ts: about 1 000 rows read a step) with its
    // default time budget, alternating with passes without one (rows only, as before the budget),
    // so both are measured under the same load.
    const refreshPass = (maxMs: number | null) =>
      pass(admin, async (next) =>
        (await admin.query(`select queen.log_stats_refresh_step_v1($1::uuid, 1000, p_max_ms => coalesce($2::int, 250)) as r`, [next, maxMs])).rows[0].r)
    const refreshRowsOnly = await refreshPass(2_147_483_647)
    const refresh = await refreshPass(null)
    const refreshRowsOnly2 = await refreshPass(2_147_483_647)
    const refresh2 = await refreshPass(null)
    log(`${settings.statsQueues} queues created in ${createSeconds} s`)
    for (const [label, r] of [['rows only', refreshRowsOnly], ['time budget', refresh], ['rows only', refreshRowsOnly2], ['time budget', refresh2]] as const)
      log(`stats refresh (${label}): ${r.steps} steps, ${r.processed} queues, ${r.seconds} s (step p50 ${r.stepMs.p50} ms, p99 ${r.stepMs.p99} ms, max ${r.stepMs.max} ms)`)
    const cached = await httpLatency(client, '/api/v1/resources/queues?stats=cached', settings.statsCalls)
    log(`?stats=cached: ${cached.queues} queues, ${Math.round(cached.bytes / 1024)} KiB, first call ${cached.firstMs} ms (renders), p50 ${cached.p50} ms, p99 ${cached.p99} ms over ${cached.calls} calls to the last byte; the client's JSON.parse ${cached.clientParseMs} ms`)
    const cachedGzip = await httpLatency(client, '/api/v1/resources/queues?stats=cached', settings.statsCalls, true)
    log(`?stats=cached, gzip: ${Math.round(cachedGzip.bytes / 1024)} KiB on the wire, first call ${cachedGzip.firstMs} ms (compresses), p50 ${cachedGzip.p50} ms, p99 ${cachedGzip.p99} ms to the last byte; the client's gunzip ${cachedGzip.clientDecodeMs} ms`)
    // The stats lane's last stage: each tenant's listing rendered again, one tenant a step.
    const listings = await pass(admin, async (next) => (await admin.query(`select queen.stats_listing_render_step_v1($1) as r`, [next])).rows[0].r)
    log(`listing render stage: ${listings.steps} steps, ${listings.seconds} s (step p50 ${listings.stepMs.p50} ms, p99 ${listings.stepMs.p99} ms, max ${listings.stepMs.max} ms)`)
    const live = await httpLatency(client, '/api/v1/resources/queues?stats=live', settings.liveCalls)
    log(`?stats=live:   p50 ${live.p50} ms, p99 ${live.p99} ms over ${live.calls} calls`)
    // In PostgreSQL alone: one cached call (a read of the stored listing) and one render of it.
    const execMs = async (call: string) => {
      const { rows } = await admin.query(`explain (analyze, timing off, summary on) select ${call}`)
      return Number(/Execution Time: ([\d.]+)/.exec(rows.map((r: Record<string, string>) => Object.values(r)[0]).join('\n'))?.[1])
    }
    const cachedProcedureMs = await execMs(`queen.log_queue_stats_cached_v1('')`)
    const renderMs = await execMs(`queen._stats_listing_render('')`)
    out.stats = { queues: settings.statsQueues + 2, createSeconds, refresh, refresh2, refreshRowsOnly, refreshRowsOnly2, listings, cached, cachedGzip, live, cachedProcedureMs, renderMs }
    log(`in PostgreSQL alone: log_queue_stats_cached_v1 ${cachedProcedureMs} ms, a render of the listing ${renderMs} ms`)

    out.elapsedSeconds = Math.round((Date.now() - started) / 1000)
    mkdirSync(join(ROOT, 'bench/results'), { recursive: true })
    writeFileSync(join(ROOT, 'bench/results/scale.json'), JSON.stringify(out, null, 2))
    log(`done in ${out.elapsedSeconds} s; bench/results/scale.json written`)
  } finally {
    await pool.end().catch(() => {})
    await stack.stop()
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
