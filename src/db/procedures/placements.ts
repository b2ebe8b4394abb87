// The placement directory and tenant moves between databases (sql/procedures/028_placements.sql;
// docs/placement.md). Every entry is broker-wide: a tenant here is the one being placed or moved,
// never the caller's.
import { z } from 'zod'
import { brokerWide, defineFamily } from '../procedure.js'

const placement = z.object({
  tenant: z.string(),
  database: z.string(),
  state: z.enum(['placed', 'moving']),
  movingTo: z.string().nullable(),
  version: z.number().int(),
  updatedAt: z.string(),
})
export type Placement = z.output<typeof placement>
const placementDirectory = z.object({ version: z.number().int(), placements: z.array(placement).nullable() })

// A table row as the export writes it (its columns as JSON): copied to the destination as it is, never read.
const tableRow = z.unknown()
/** One page of an export; next is the page's last row (where the next page starts), null after the last page. */
const exportPage = z.object({ rows: z.array(tableRow), next: tableRow })

export const placementsFamily = defineFamily({
  /** The placement directory (default database only): every row unless the caller holds its version. */
  placements_directory_v1: brokerWide<{ known?: number }>({ known: 'bigint' }).returns(placementDirectory),
  /** Places a tenant on a database by name. */
  placement_set_v1: brokerWide<{ tenant: string; database: string; force?: boolean; now?: Date }>({
    tenant: 'text',
    database: 'text',
    force: 'boolean',
    now: 'timestamptz',
  }).returns(placement),
  /** A move's fence: the tenant is refused everywhere until placement_move_end_v1. */
  placement_move_begin_v1: brokerWide<{ tenant: string; from: string; to: string; now?: Date }>({
    tenant: 'text',
    from: 'text',
    to: 'text',
    now: 'timestamptz',
  }).returns(placement),
  /** Lifts a move's fence, leaving the tenant on `database` (the flip, or the abort). */
  placement_move_end_v1: brokerWide<{ tenant: string; database: string; now?: Date }>({ tenant: 'text', database: 'text', now: 'timestamptz' }).returns(
    placement,
  ),
  /** One page of a tenant's rows of one table, for a move's copy. */
  placement_export_v1: brokerWide<{ tenant: string; table: string; after: unknown; limit: number }>({
    tenant: 'text',
    table: 'text',
    after: 'jsonb',
    limit: 'int',
  }).returns(exportPage),
  /** Inserts exported rows of one table on the destination. */
  placement_import_v1: brokerWide<{ table: string; rows: unknown[] }>({ table: 'text', rows: 'jsonb' }).returns(z.object({ imported: z.number().int() })),
  /** Per tenant-scoped table: row count and content digest, compared across a move. */
  placement_census_v1: brokerWide<{ tenant: string }>({ tenant: 'text' }).returns(
    z.record(z.string(), z.object({ rows: z.number().int(), digest: z.string().nullable() })),
  ),
  /** Open transactions of this database that started before `before` (a move's drain). */
  placement_drain_v1: brokerWide<{ before: Date }>({ before: 'timestamptz' }).returns(z.object({ open: z.number().int() })),
  /** Deletes every row of a tenant from one database. */
  placement_purge_v1: brokerWide<{ tenant: string }>({ tenant: 'text' }).returns(z.object({ deleted: z.number().int() })),
})
