// `npx tsx bench/sink-scale.ts`: the lake sink at scale (BENCHMARKS.md): FRAMES frames (1 000 000)
// over PARTITIONS partitions (10 000) of one queue, archived as one per-queue hourly window, once
// as Parquet and once as gzip JSONL, each by a fresh sink process into a temporary directory.
// RUN frames of a partition follow each other in the push (100; RUN=1 spreads every frame to its
// own segment, fetch's worst case). Reports frames/s, stored bytes per frame, objects, and the peak RSS and heap of this process
// while it archives: the memory a window costs must not grow with the window (rows are streamed a
// batch of partitions at a time into parts of at most maxFrames rows).
// Setup note: pushing a million frames takes minutes, longer than one wants to wait for an hourly
// window to close, so after the push the queue's segments are moved back, as one block, to start
// at the previous hour's start (order and spacing kept): the whole push then lies in one closed
// hourly window. BENCH_DATABASE_URL, or an embedded PostgreSQL.
import { join } from 'node:path'
import pg from 'pg'
import { loadConfig } from '../src/config.js'
import { createSinkEngine } from '../src/sink/engine.js'
import { sinkOptions } from '../src/sink/options.js'
import { databaseSource } from '../src/sink/source.js'
import { directoryStore } from '../src/sink/store-directory.js'
import { pushOrderFrames, sinkBenchDatabase } from './sink-frames.js'

const FRAMES = Number(process.env.FRAMES ?? 1_000_000)
const PARTITIONS = Number(process.env.PARTITIONS ?? 10_000)
// Frames of one partition in a row of the push (so in one stored segment): fetch's cost grows with
// the segments it reads, so 1 (every frame its own segment) is the worst case and 100 a bulk producer.
const RUN = Number(process.env.RUN ?? 100)

async function main() {
  const { url, db, tmp, close } = await sinkBenchDatabase('queen-sink-scale-')
  const queue = `sink-scale-${Date.now()}`
  const pushStarted = Date.now()
  await pushOrderFrames(db, queue, FRAMES, (n) => `customer-${Math.floor(n / RUN) % PARTITIONS}`)
  const pushMs = Date.now() - pushStarted
  console.log(`pushed ${FRAMES} frames over ${PARTITIONS} partitions (runs of ${RUN}) in ${pushMs} ms`)
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await admin.query(
    `with q as (select p.id from queen.log_partitions p join queen.queues q on q.id = p.queue_id where q.name = $1),
          m as (select min(s.created_at) as first from queen.log_segments s where s.partition_id in (select id from q))
     update queen.log_segments s set created_at = date_trunc('hour', now()) - interval '1 hour' + (s.created_at - m.first)
       from m where s.partition_id in (select id from q)`,
    [queue],
  )
  // What autovacuum would do after such a load; without it the planner still sees empty tables.
  await admin.query('vacuum analyze queen.log_segments, queen.log_partitions')
  await admin.end()
  if (pushMs > 3_000_000) throw new Error('the push took longer than the hour it is moved into')

  const results: Record<string, unknown>[] = []
  for (const format of ['parquet', 'jsonl'] as const) {
    const store = directoryStore(join(tmp, format))
    const options = sinkOptions.parse({ sink: `scale-${format}`, queues: [queue], windowSeconds: 3600, format })
    const engine = createSinkEngine(databaseSource(db, loadConfig({ LOG_LEVEL: 'silent' }, 'node'), ''), store, options)
    globalThis.gc?.()
    const base = process.memoryUsage()
    let peakRss = base.rss
    let peakHeap = base.heapUsed
    const sampler = setInterval(() => {
      const m = process.memoryUsage()
      peakRss = Math.max(peakRss, m.rss)
      peakHeap = Math.max(peakHeap, m.heapUsed)
    }, 100)
    const started = performance.now()
    let frames = 0
    let bytes = 0
    let objects = 0
    for (;;) {
      const [run] = await engine.runOnce(600_000)
      frames += run!.frames
      bytes += run!.bytes
      objects += run!.objects
      if (run!.caughtUp) break
    }
    const seconds = (performance.now() - started) / 1000
    clearInterval(sampler)
    await engine.release()
    const result = {
      format,
      frames,
      objects,
      seconds: Number(seconds.toFixed(1)),
      framesPerSecond: Math.round(frames / seconds),
      bytesPerFrame: Number((bytes / frames).toFixed(1)),
      peakRssMiB: Math.round(peakRss / 2 ** 20),
      peakHeapMiB: Math.round(peakHeap / 2 ** 20),
      baseRssMiB: Math.round(base.rss / 2 ** 20),
    }
    results.push(result)
    console.log(JSON.stringify(result))
  }
  await close()
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
