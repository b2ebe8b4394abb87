// POST /api/v1/partitions/changed (docs/sink-protocol.md, design decision 32): the only route
// that lists partition names, with a safeTime watermark. Read-only, no admission permit: one call
// of log_partitions_changed_v1, issued as a single autocommit statement so the procedure runs at
// READ COMMITTED with a fresh snapshot per statement (which its safeTime argument needs).
import { z } from 'zod'
import { instant } from '../http/query-schema.js'
import { route } from '../http/route.js'
import { entriesBody, partitionLogRead } from '../partitions/entries-body.js'

const changedEntry = z.object({
  queue: z.string({ error: 'must be a string' }),
  // The same instants every other route accepts (instant()), normalised before SQL sees them.
  since: instant().optional(),
  after: z.string({ error: 'must be the opaque cursor string of an earlier answer' }).optional(),
  // Clamped to [1, 10 000] by the procedure (design decision 30), so any integer is accepted.
  limit: z.number().int('must be an integer').optional(),
})

export const changedBody = entriesBody(changedEntry)

export const partitionsRoutes = [
  route(
    { ...partitionLogRead, path: '/api/v1/partitions/changed', summary: 'List partitions changed since a time or cursor, with a safeTime watermark', request: { body: changedBody } },
    async (c, { body }) => c.json(await c.get('db').call('log_partitions_changed_v1', { entries: body.entries })),
  ),
]
