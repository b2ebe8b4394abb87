// A fingerprint of everything the broker has stored, to prove that a refused request wrote
// nothing: the row count of every table of the queen schema (found at run time, so tables added by
// later migrations are covered without a change here) and a digest of the rows of the tables a
// refused request could otherwise alter in place (queue options, kv values, cursors and leases).
import type { TestDatabase } from './database.js'

const DIGESTED = ['queues', 'kv_entries', 'log_consumers', 'consumer_groups']

export type Snapshot = Record<string, number | string>

export async function engineSnapshot(database: TestDatabase): Promise<Snapshot> {
  const tables = await database.sql<{ name: string }>(
    `select table_name as name from information_schema.tables where table_schema = 'queen' and table_type = 'BASE TABLE' order by 1`,
  )
  const counts = tables.map((t) => `(select count(*) from queen.${t.name})::int as "${t.name}"`)
  const digests = DIGESTED.filter((name) => tables.some((t) => t.name === name)).map(
    (name) => `(select md5(coalesce(string_agg(t::text, '|' order by t::text), '')) from queen.${name} t) as "${name}#"`,
  )
  const [row] = await database.sql<Snapshot>(`select ${[...counts, ...digests].join(', ')}`)
  return row!
}

/** The entries that differ between two snapshots, for a readable failure. */
export function snapshotDiff(before: Snapshot, after: Snapshot): string[] {
  return Object.keys({ ...before, ...after })
    .filter((k) => before[k] !== after[k])
    .map((k) => `${k}: ${before[k]} -> ${after[k]}`)
}

/**
 * The next transaction id PostgreSQL will assign, cluster-wide. A request that stored anything
 * took an id, so an unchanged value proves nothing was written, in one cheap query; a changed one
 * (another writer may have moved it) sends the caller to the full snapshot.
 */
export async function nextTransactionId(database: TestDatabase): Promise<string> {
  const [row] = await database.sql<{ next: string }>(`select pg_snapshot_xmax(pg_current_snapshot())::text as next`)
  return row!.next
}
