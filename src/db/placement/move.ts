// Moving a tenant between databases (docs/placement.md): fence, drain, copy, verify, flip, purge.
//
// 1. fence: the directory marks the tenant 'moving'; every broker refuses its requests (503 +
//    Retry-After) once its cached map shows the mark, which takes at most 2 × TTL (placement-
//    cache.ts bounds staleness), so the move waits that long;
// 2. drain: it then waits until no transaction that began before the wait ended is still open on
//    the source, so nothing the tenant wrote before the fence is still in flight;
// 3. copy: one destination transaction purges any leftovers of the tenant, then imports every
//    tenant-scoped table page by page, parents first;
// 4. verify: both databases' census (row counts and a digest of every row) must be equal;
// 5. flip: the directory places the tenant on the destination and lifts the fence;
// 6. purge: the source's copy is deleted. A failed purge leaves unreachable rows only (a later move
//    back purges them before copying).
// Any failure before the flip abandons the move: the destination's copy is removed (it was never
// served) and the fence is lifted with the tenant where it was. Nothing is ever lost: the source
// is untouched until the destination has been verified and made the tenant's home.
import { compileCall, type Procedure } from '../procedure.js'
import { procedures, type ArgsOf, type ProcedureName, type ResultOf } from '../procedures.js'
import { DbError, toDbError } from '../errors.js'
import type { Queryable } from '../queryable.js'
import type { Logger } from '../../log.js'
import { DEFAULT_DATABASE, type DatabaseHandle } from './database-set.js'
import type { PlacementRouter } from './router.js'

/** Every tenant-scoped table, parents first, and how many rows one export page carries. */
export const TENANT_TABLES: readonly { name: string; page: number }[] = [
  { name: 'queues', page: 1000 },
  { name: 'log_partitions', page: 2000 },
  // Segments carry the frames: small pages keep one page's JSON well under a statement's comfort.
  { name: 'log_segments', page: 200 },
  { name: 'log_consumers', page: 2000 },
  { name: 'consumer_groups', page: 2000 },
  { name: 'log_txns', page: 5000 },
  { name: 'log_tombstones', page: 5000 },
  { name: 'stats', page: 2000 },
  { name: 'queue_metrics', page: 5000 },
  { name: 'log_dlq', page: 500 },
  { name: 'message_traces', page: 2000 },
  { name: 'stream_queries', page: 1000 },
  { name: 'stream_state', page: 2000 },
  { name: 'stream_shards', page: 2000 },
  { name: 'kv_entries', page: 500 },
  { name: 'timers', page: 500 },
]

export interface MoveReport {
  tenant: string
  from: string
  to: string
  moved: boolean
  /** Rows copied per table. */
  copied: Record<string, number>
  /** Milliseconds per phase; `window` is how long the tenant was refused (fence to flip). */
  ms: { fence: number; drain: number; copy: number; verify: number; purge: number; window: number }
  sourcePurged: boolean
}

export interface MoveOptions {
  log: Logger
  /** How long to wait for open transactions on the source after the fence (default: 60 s). */
  drainTimeoutMs?: number
}

const conflict = (message: string) => new DbError('sqlstate', 'QM409', message)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** A procedure call on a session (BEGIN … COMMIT on one connection), for the copy's transaction. */
async function sessionCall<N extends ProcedureName>(client: Queryable, name: N, args: ArgsOf<N>): Promise<ResultOf<N>> {
  const proc = procedures[name] as Procedure<object, unknown>
  const { text, values } = compileCall(proc, args as object)
  try {
    const { rows } = await client.query(text, values)
    return proc.result.parse(rows[0]?.result) as ResultOf<N>
  } catch (error) {
    throw toDbError(error)
  }
}

/** Runs work in one transaction with a timeout long enough for bulk steps (SET LOCAL, design decision 34). */
async function inTransaction<T>(handle: DatabaseHandle, work: (client: Queryable) => Promise<T>): Promise<T> {
  if (!handle.pool) throw new Error(`database ${handle.name} has no pool to open a session on`)
  const client = await handle.pool.connect().catch((error: unknown) => {
    throw toDbError(error)
  })
  try {
    await client.query('begin')
    await client.query(`set local statement_timeout = '10min'`)
    const result = await work(client)
    await client.query('commit')
    return result
  } catch (error) {
    await client.query('rollback').catch(() => {})
    throw toDbError(error)
  } finally {
    client.release()
  }
}

export async function moveTenant(router: PlacementRouter, tenant: string, to: string, options: MoveOptions): Promise<MoveReport> {
  const { set, cache } = router
  const directory = set.get(DEFAULT_DATABASE).db
  cache.invalidate()
  const from = (await cache.lookup(tenant, directory)).database
  const report: MoveReport = {
    tenant,
    from,
    to,
    moved: false,
    copied: {},
    ms: { fence: 0, drain: 0, copy: 0, verify: 0, purge: 0, window: 0 },
    sourcePurged: false,
  }
  if (from === to) return report
  const source = set.get(from)
  const destination = set.get(to)

  const started = Date.now()
  await directory.call('placement_move_begin_v1', { tenant, from, to })
  cache.invalidate()
  let flipped = false
  try {
    // Every broker's map shows the fence after at most 2 × TTL (placement-cache.ts).
    await sleep(2 * cache.ttlMs + 50)
    report.ms.fence = Date.now() - started

    const drainStarted = Date.now()
    const before = new Date()
    for (;;) {
      const { open } = await source.db.call('placement_drain_v1', { before })
      if (open === 0) break
      if (Date.now() - drainStarted > (options.drainTimeoutMs ?? 60_000)) throw conflict('transactions on the source did not finish; move abandoned')
      await sleep(100)
    }
    report.ms.drain = Date.now() - drainStarted

    const copyStarted = Date.now()
    await inTransaction(destination, async (client) => {
      await sessionCall(client, 'placement_purge_v1', { tenant })
      for (const table of TENANT_TABLES) {
        let after: unknown = null
        let rows = 0
        do {
          const page = await source.db.call('placement_export_v1', { tenant, table: table.name, after: after ?? undefined, limit: table.page })
          if (page.rows.length > 0) rows += (await sessionCall(client, 'placement_import_v1', { table: table.name, rows: page.rows })).imported
          after = page.next
        } while (after !== null && after !== undefined)
        report.copied[table.name] = rows
      }
    })
    report.ms.copy = Date.now() - copyStarted

    const verifyStarted = Date.now()
    const [a, b] = await Promise.all([
      inTransaction(source, (client) => sessionCall(client, 'placement_census_v1', { tenant })),
      inTransaction(destination, (client) => sessionCall(client, 'placement_census_v1', { tenant })),
    ])
    const differs = Object.keys({ ...a, ...b }).filter((t) => JSON.stringify(a[t]) !== JSON.stringify(b[t]))
    const unknown = Object.keys(a).filter((t) => !TENANT_TABLES.some((x) => x.name === t))
    if (unknown.length) throw conflict(`tables ${unknown.join(', ')} are tenant-scoped but not copied`)
    if (differs.length) throw conflict(`copy did not verify (${differs.join(', ')} differ); move abandoned`)
    report.ms.verify = Date.now() - verifyStarted

    await directory.call('placement_move_end_v1', { tenant, database: to })
    flipped = true
    cache.invalidate()
    report.ms.window = Date.now() - started
    report.moved = true
  } finally {
    if (!flipped) {
      await inTransaction(destination, (client) => sessionCall(client, 'placement_purge_v1', { tenant })).catch((error) =>
        options.log.error('move: leftovers on the destination could not be removed', { tenant, to, error: String(error) }),
      )
      await directory.call('placement_move_end_v1', { tenant, database: from }).catch((error) =>
        options.log.error('move: the fence could not be lifted; lift it with PUT /api/v1/system/placements/:tenant and force: true', { tenant, error: String(error) }),
      )
      cache.invalidate()
    }
  }

  const purgeStarted = Date.now()
  try {
    await inTransaction(source, (client) => sessionCall(client, 'placement_purge_v1', { tenant }))
    report.sourcePurged = true
  } catch (error) {
    options.log.error('move: the source copy could not be purged (unreachable rows remain)', { tenant, from, error: String(error) })
  }
  report.ms.purge = Date.now() - purgeStarted
  options.log.info('tenant moved', { ...report })
  return report
}
