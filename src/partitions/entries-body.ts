// The body of the two partition-log reads, /partitions/changed and /fetch (its read half): a list
// of per-queue or per-partition entries, bounded so one call stays one bounded procedure call.
import { z } from 'zod'
import { ROLE_SETS } from '../http/route.js'

/** At most 100 entries per call. */
export const MAX_ENTRIES = 100

/** `{entries: [...]}` of at most MAX_ENTRIES. */
export const entriesBody = <E extends z.ZodType>(entry: E) =>
  z.object({ entries: z.array(entry, { error: 'must be an array' }).max(MAX_ENTRIES, `at most ${MAX_ENTRIES} entries`) })

/**
 * The route record both reads share: POST, any read role, the caller's tenant, a required body.
 * They are the two halves of one protocol (docs/sink-protocol.md), so these must not drift apart.
 */
export const partitionLogRead = { method: 'POST', roles: ROLE_SETS.R_RW_A, tenant: 'required', body: 'required' } as const
