// The Workers sink: on every cron firing, the queues in SINK_QUEUES are archived into the R2
// bucket bound as SINK_BUCKET, by the same engine the Node command runs, within a budget of its
// own (it runs next to the maintenance lanes, not inside their 45 s share). Each firing is a
// new process to the lease: a firing that overlaps a still-running one finds the lease held and
// does nothing, and one that follows a killed invocation waits out the lease.
import type { Config } from '../src/config.js'
import type { Database } from '../src/db/database.js'
import { describeError, type Logger } from '../src/log.js'
import { createSinkEngine, type QueueRun } from '../src/sink/engine.js'
import { sinkOptions } from '../src/sink/options.js'
import { databaseSource } from '../src/sink/source.js'
import { r2Store, type R2BucketLike } from '../src/sink/store-r2.js'

const SINK_BUDGET_MS = 20_000
// Longer than a firing's budget, so a live run never loses its lease between two windows.
const SINK_LEASE_SECONDS = 60

export async function runSinkCron(db: Database, config: Config, bucket: unknown, log: Logger): Promise<QueueRun[]> {
  if (config.SINK_QUEUES === undefined) return []
  if (!bucket || typeof (bucket as R2BucketLike).put !== 'function') {
    log.error('sink not run', { reason: 'SINK_QUEUES is set but there is no R2 binding named SINK_BUCKET (wrangler.toml [[r2_buckets]])' })
    return []
  }
  const options = sinkOptions.parse({
    sink: config.SINK_NAME,
    queues: config.SINK_QUEUES.split(',').map((q) => q.trim()),
    tenant: config.SINK_TENANT,
    prefix: config.SINK_PREFIX,
    windowSeconds: config.SINK_WINDOW_SECONDS,
    layout: config.SINK_LAYOUT,
    format: config.SINK_FORMAT,
    compression: config.SINK_COMPRESSION,
    windows: config.SINK_WINDOWS,
    align: config.SINK_ALIGN,
    maxFrames: config.SINK_MAX_FRAMES,
    maxBytes: config.SINK_MAX_BYTES,
    leaseSeconds: SINK_LEASE_SECONDS,
  })
  const engine = createSinkEngine(databaseSource(db, config, options.tenant), r2Store(bucket as R2BucketLike, 'SINK_BUCKET'), options)
  try {
    const runs = await engine.runOnce(SINK_BUDGET_MS)
    for (const run of runs) if (run.windows > 0) log.info('sink archived', { ...run })
    return runs
  } catch (error) {
    log.error('sink failed', describeError(error))
    return []
  } finally {
    // The next firing is another holder token: hand the lease over now rather than in 60 s.
    await engine.release()
  }
}
