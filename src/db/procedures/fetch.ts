// Frames of partition logs by offset, for mirrors and sinks (sql/procedures/010_log_fetch.sql).
import { z } from 'zod'
import { defineFamily, tenantScoped } from '../procedure.js'
import { entryError } from './shared.js'

const fetched = z.object({
  entries: z.array(
    z.union([
      z.object({
        queue: z.string(),
        partition: z.string(),
        logStart: z.number(),
        lastOffset: z.number(),
        fromOffset: z.number(),
        nextOffset: z.number(),
        frames: z.array(
          z.object({
            offset: z.number(),
            id: z.string(),
            transactionId: z.string(),
            traceId: z.string().nullable(),
            producerSub: z.string().nullable(),
            createdAt: z.string(),
            enc: z.boolean(),
            data: z.unknown(),
          }),
        ),
      }),
      entryError,
    ]),
  ),
})

export const fetchFamily = defineFamily({
  /** Frames of each named partition from an offset on, within a byte budget. */
  log_fetch_v1: tenantScoped<{ tenant: string; entries: unknown[] }>({ tenant: 'text', entries: 'jsonb' }).returns(fetched),
})
