// `npm run bench:memory` (issue #22, "Memory"): the broker's resident memory under the heaviest
// workload and what the console and the OpenAPI document cost it.
//  1. On a fresh broker: RSS (/proc/<pid>/status VmRSS) and the V8 heap (GET /metrics, after a full
//     GC forced through bench/gc-on-signal.mjs) before any page, after one of each (and /health), and after 200
//     requests cycling over the console's shell, settings, assets, /openapi.json and /docs; 200
//     /health requests beside them as the control.
//  2. BENCH_SOAK_MS (300 000) of 64 keep-alive clients mixing push batch 100, push batch 1 and
//     pop 100 + ack on a 1 001-partition queue, RSS sampled every 5 s (and the heap as /metrics
//     reports it, without forcing a GC). The lanes run at their defaults, as in production.
// Writes bench/results/memory.json and prints the curve.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { closedLoop, round, sleep, type HttpClient } from './lib.js'
import * as queen from './queen.js'
import { ASSET_BASE, ASSETS } from '../src/console/assets.js'
import { ROOT, envInt, log, rssMb, startStack } from './stack.js'

const settings = {
  soakMs: envInt('BENCH_SOAK_MS', 300_000),
  sampleMs: envInt('BENCH_MEMORY_SAMPLE_MS', 5000),
  clients: 64,
  partitions: 1001,
  pageRequests: envInt('BENCH_MEMORY_PAGE_REQUESTS', 200),
  targetMb: 200,
}

const mb = (bytes: number) => round(bytes / 2 ** 20, 1)

async function heap(client: HttpClient, pid: number) {
  process.kill(pid, 'SIGUSR2')
  await sleep(300)
  const res = await client.request('GET', '/metrics')
  const m = res.body.memory as { heapUsed: number; heapTotal: number; external: number }
  return { rssMb: rssMb(pid), heapUsedMb: mb(m.heapUsed), heapTotalMb: mb(m.heapTotal), externalMb: mb(m.external) }
}

/** Least-squares slope of y over x (MB per minute when x is in minutes). */
function slope(points: { x: number; y: number }[]) {
  const n = points.length
  if (n < 2) return NaN
  const mx = points.reduce((a, p) => a + p.x, 0) / n
  const my = points.reduce((a, p) => a + p.y, 0) / n
  const num = points.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0)
  const den = points.reduce((a, p) => a + (p.x - mx) ** 2, 0)
  return round(num / den, 2)
}

async function main() {
  const started = Date.now()
  const stack = await startStack({ nodeFlags: ['--expose-gc', '--import', join(ROOT, 'bench/gc-on-signal.mjs')] })
  const { client } = stack
  const pid = stack.broker.pid!
  const out: Record<string, unknown> = { settings, at: new Date().toISOString() }
  try {
    // ---- pages
    // Every bundled asset, not only the two the shell links: main.js imports the others.
    const assets = Object.keys(ASSETS).map((name) => `${ASSET_BASE}/${name}`)
    const pages = ['/', '/console/queues', '/console/config.json', ...assets, '/openapi.json', '/docs']
    // Before any page: the documents are built on first use, a one-time cost outside the request path.
    const cold = await heap(client, pid)
    for (const p of pages) {
      const res = await client.request('GET', p)
      if (res.status !== 200) throw new Error(`${p} answered ${res.status}`)
    }
    log(`pages: ${pages.length} paths (${assets.length} assets)`)
    // /health first, as the control: the same number of requests that touch no page.
    await client.request('GET', '/health')
    const h0 = await heap(client, pid)
    for (let i = 0; i < settings.pageRequests; i++) await client.request('GET', '/health')
    const h1 = await heap(client, pid)
    for (let i = 0; i < settings.pageRequests; i++) await client.request('GET', pages[i % pages.length]!)
    const h2 = await heap(client, pid)
    for (let i = 0; i < settings.pageRequests; i++) await client.request('GET', pages[i % pages.length]!)
    const h3 = await heap(client, pid)
    out.pages = { paths: pages, requests: settings.pageRequests, beforeAnyPage: cold, beforeHealth: h0, afterHealth: h1, afterPages: h2, afterPagesAgain: h3 }
    log(`first request of each page: RSS ${cold.rssMb} → ${h0.rssMb} MB, heap ${cold.heapUsedMb} → ${h0.heapUsedMb} MB`)
    log(`health ×${settings.pageRequests}: RSS ${h0.rssMb} → ${h1.rssMb} MB, heap ${h0.heapUsedMb} → ${h1.heapUsedMb} MB`)
    log(`pages ×${settings.pageRequests}: RSS ${h1.rssMb} → ${h2.rssMb} MB, heap ${h1.heapUsedMb} → ${h2.heapUsedMb} MB; again ×${settings.pageRequests}: RSS ${h3.rssMb} MB, heap ${h3.heapUsedMb} MB`)

    // ---- soak
    const q = 'bench-memory'
    await queen.configure(client, q)
    await queen.createPartitions(client, q, settings.partitions)
    const samples: { t: number; rssMb: number; heapUsedMb: number | null }[] = []
    const t0 = performance.now()
    let sampling = true
    const sampler = (async () => {
      while (sampling) {
        const t = round((performance.now() - t0) / 1000, 0)
        let heapUsedMb: number | null = null
        try {
          heapUsedMb = mb(((await client.request('GET', '/metrics')).body.memory as { heapUsed: number }).heapUsed)
        } catch {
          // a lost sample
        }
        samples.push({ t, rssMb: rssMb(pid), heapUsedMb })
        const next = t0 + samples.length * settings.sampleMs
        await sleep(Math.max(0, next - performance.now()))
      }
    })()
    log(`soak: ${settings.clients} clients for ${settings.soakMs / 1000} s (push 100 / push 1 / pop 100 + ack)`)
    let n = 0
    const moved = { push100: 0, push1: 0, popAck: 0 }
    const result = await closedLoop({
      concurrency: settings.clients,
      warmupMs: 0,
      durationMs: settings.soakMs,
      op: async (w) => {
        const kind = w % 3
        if (kind === 2) {
          const got = await queen.popAck(client, q, 100)
          if (got !== 'empty') moved.popAck += got
          return got
        }
        const batch = kind === 0 ? 100 : 1
        const partition = queen.partitionName(Math.floor(Math.random() * settings.partitions))
        const res = await client.request('POST', '/api/v1/push', { items: Array.from({ length: batch }, () => ({ queue: q, partition, payload: queen.smallPayload(n++) })) })
        if (res.status !== 201) throw new Error(`push answered ${res.status}`)
        if (batch === 100) moved.push100 += batch
        else moved.push1 += batch
        return batch
      },
    })
    sampling = false
    await sampler
    const after = await heap(client, pid)
    const rss = samples.map((s) => s.rssMb)
    const perMinute = (from: number) => slope(samples.filter((s) => s.t >= from).map((s) => ({ x: s.t / 60, y: s.rssMb })))
    out.soak = {
      seconds: result.seconds,
      requestsPerSec: result.opsPerSec,
      errors: result.errors,
      moved: { ...moved, perSec: Object.fromEntries(Object.entries(moved).map(([k, v]) => [k, Math.round(v / result.seconds)])) },
      rss: { min: Math.min(...rss), max: Math.max(...rss), last: rss[rss.length - 1], slopeMbPerMin: perMinute(0), slopeAfterFirstMinute: perMinute(60) },
      afterGc: after,
      samples,
    }
    log(`soak: ${result.opsPerSec} req/s, moved ${JSON.stringify(moved)}, errors ${result.errors}`)
    log(`RSS min ${Math.min(...rss)} max ${Math.max(...rss)} MB, slope ${perMinute(0)} MB/min (after the first minute ${perMinute(60)}); after GC: RSS ${after.rssMb} MB, heap ${after.heapUsedMb} MB (target ≤ ${settings.targetMb} MB, flat)`)
    for (const [i, s] of samples.entries()) if (i % 6 === 0 || i === samples.length - 1) console.log(`  t=${String(s.t).padStart(4)} s  RSS ${s.rssMb} MB  heap ${s.heapUsedMb ?? '-'} MB`)

    out.elapsedSeconds = Math.round((Date.now() - started) / 1000)
    mkdirSync(join(ROOT, 'bench/results'), { recursive: true })
    writeFileSync(join(ROOT, 'bench/results/memory.json'), JSON.stringify(out, null, 2))
    log(`done in ${out.elapsedSeconds} s; bench/results/memory.json written`)
  } finally {
    await stack.stop()
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
