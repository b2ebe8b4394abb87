// What the sink benches share: a database to archive from (BENCH_DATABASE_URL, or an embedded
// PostgreSQL in a temporary directory), migrated, and a queue filled with order-like frames.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDatabase, type Database } from '../src/db/database.js'
import { startEmbeddedPostgres, type EmbeddedServer } from '../src/db/embedded.js'
import { migrate } from '../src/db/migrate.js'
import { createNodePool } from '../src/db/node-pool.js'

const BATCH = 1000

export interface SinkBenchDatabase {
  url: string
  db: Database
  /** A scratch directory for the stores; removed by `close`. */
  tmp: string
  close(): Promise<void>
}

export async function sinkBenchDatabase(prefix: string): Promise<SinkBenchDatabase> {
  const tmp = mkdtempSync(join(tmpdir(), prefix))
  let embedded: EmbeddedServer | undefined
  let url = process.env.BENCH_DATABASE_URL
  if (!url) {
    embedded = await startEmbeddedPostgres({ dataDir: tmp })
    url = embedded.url
  }
  const migration = createNodePool({ connectionString: url, max: 1 })
  await migrate(migration, { statementTimeoutMs: 25_000 })
  await migration.end()
  const db = createDatabase(createNodePool({ connectionString: url, max: 4 }), { longLived: true })
  return {
    url,
    db,
    tmp,
    close: async () => {
      await db.close()
      await embedded?.stop()
      rmSync(tmp, { recursive: true, force: true })
    },
  }
}

/** Pushes `frames` order-like frames to `queue`, in calls of 1 000, frame n to partition `partitionOf(n)`. */
export async function pushOrderFrames(db: Database, queue: string, frames: number, partitionOf: (n: number) => string): Promise<void> {
  for (let b = 0; b < frames / BATCH; b++) {
    const items = Array.from({ length: BATCH }, (_, i) => {
      const n = b * BATCH + i
      const partition = partitionOf(n)
      return { index: i, queue, partition, data: { orderId: `ord-${n}`, customer: partition, amount: (n % 997) * 1.25, currency: 'EUR', items: [{ sku: `sku-${n % 50}`, qty: 1 + (n % 3) }] } }
    })
    await db.call('log_push_v1', { tenant: '', items })
  }
}
