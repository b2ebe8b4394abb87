// Partition names and bounds for mirrors and sinks (sql/procedures/009_log_partitions_changed.sql).
import { z } from 'zod'
import { defineFamily, tenantScoped } from '../procedure.js'
import { entryError } from './shared.js'

const partitionsChanged = z.object({
  safeTime: z.string(),
  safeTimeDegraded: z.boolean(),
  entries: z.array(
    z.union([
      z.object({
        queue: z.string(),
        partitions: z.array(z.object({ name: z.string(), lastOffset: z.number(), logStart: z.number(), lastWriteAt: z.string().nullable() })),
        next: z.string().nullable(),
      }),
      entryError,
    ]),
  ),
})

export const partitionsChangedFamily = defineFamily({
  /** Partition names and bounds by name or changed-since, with the safeTime watermark. */
  log_partitions_changed_v1: tenantScoped<{ tenant: string; entries: unknown[] }>({ tenant: 'text', entries: 'jsonb' }).returns(partitionsChanged),
})
