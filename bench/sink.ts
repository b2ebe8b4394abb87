// `npx tsx bench/sink.ts`: the archive sink's throughput and object size on this machine (the
// figures in docs/sink.md). Pushes FRAMES frames of an order-like JSON payload over 16 partitions
// (BENCH_DATABASE_URL, or an embedded PostgreSQL), then times one sink process archiving all of it
// into a temporary directory with 60 s windows, and reports frames/s and stored bytes per frame.
// FORMATS (default `legacy,jsonl,parquet`): which writers to time, one after another over the same
// pushed frames, each by a fresh sink name: the legacy layout, or the hive layout's gzip JSONL or
// Parquet with per-queue windows; `jsonl+zstd` and `parquet+zstd` pick the zstd codec. A format may
// be listed twice, to alternate variants on a noisy machine. Each line also gives the sink
// process's CPU time per frame, steadier than frames/s when other work shares the cores.
import { join } from 'node:path'
import { loadConfig } from '../src/config.js'
import { createSinkEngine } from '../src/sink/engine.js'
import { sinkOptions } from '../src/sink/options.js'
import { databaseSource } from '../src/sink/source.js'
import { directoryStore } from '../src/sink/store-directory.js'
import { pushOrderFrames, sinkBenchDatabase } from './sink-frames.js'

const FRAMES = Number(process.env.FRAMES ?? 200_000)
const PARTITIONS = 16

async function main() {
  const { db, tmp, close } = await sinkBenchDatabase('queen-sink-bench-')
  const queue = `sink-bench-${Date.now()}`
  const pushStarted = Date.now()
  await pushOrderFrames(db, queue, FRAMES, (n) => `customer-${n % PARTITIONS}`)
  console.log(`pushed ${FRAMES} frames in ${Date.now() - pushStarted} ms`)
  // Every frame must be below safeTime (5 s guard) and in a closed 60 s window before timing starts.
  await new Promise((r) => setTimeout(r, 66_000))
  const formats = (process.env.FORMATS ?? 'legacy,jsonl,parquet').split(',')
  for (const [index, format] of formats.entries()) {
    const store = directoryStore(join(tmp, `${format}-${index}`))
    const [kind, codec] = format.split('+') as ['legacy' | 'jsonl' | 'parquet', 'zstd' | undefined]
    const options = sinkOptions.parse({
      sink: `bench-${kind}-${codec ?? 'default'}-${index}`,
      queues: [queue],
      windowSeconds: 60,
      ...(kind === 'legacy' ? { layout: 'legacy' } : { format: kind, ...(codec ? { compression: codec } : {}) }),
    })
    const engine = createSinkEngine(databaseSource(db, loadConfig({ LOG_LEVEL: 'silent' }, 'node'), ''), store, options)
    const started = performance.now()
    const cpu = process.cpuUsage()
    let frames = 0
    let bytes = 0
    let objects = 0
    for (;;) {
      const [run] = await engine.runOnce(60_000)
      frames += run!.frames
      bytes += run!.bytes
      objects += run!.objects
      if (run!.caughtUp) break
    }
    const seconds = (performance.now() - started) / 1000
    const used = process.cpuUsage(cpu)
    await engine.release()
    const cpuMicrosPerFrame = Number(((used.user + used.system) / frames).toFixed(1))
    const load = (await import('node:os')).loadavg()[0]!.toFixed(1)
    console.log(JSON.stringify({ format, frames, objects, seconds: Number(seconds.toFixed(2)), framesPerSecond: Math.round(frames / seconds), cpuMicrosPerFrame, storedBytesPerFrame: Number((bytes / frames).toFixed(1)), load }))
  }
  await close()
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
