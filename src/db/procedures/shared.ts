// Small schemas several procedure families share, and `verbatim`, the one way an answer a route
// sends as it is gets checked without being rebuilt.
import { z } from 'zod'
import { QUEUE_OPTIONS, type QueueOptionKey } from '../../queue-options.js'

// int8 offsets arrive inside jsonb as JSON numbers; they stay below 2^53 for any realistic log.
export const offset = z.number().int()

/** A row count or a sum of counts (PostgreSQL's bigint and numeric sums arrive as JSON numbers). */
export const count = z.number().int()

/** An instant as the procedures write it (_iso_ms, _iso_us): ISO 8601 text in UTC. */
export const instant = z.string()

/** Seconds since the stats rows in scope were computed, or -1 before the stats lane's first pass. */
export const statsAge = z.number()

/** The encryption flag of each queue a write touched, so the route can refresh its cache. */
export const encFlags = z.array(z.object({ name: z.string(), encryptionEnabled: z.boolean() }))

/** One bounded step of a maintenance lane: rows it handled, and where the next step resumes (null: done). */
export const stepResult = z.object({ processed: z.number().int(), next: z.string().nullable() })
export type StepResult = z.output<typeof stepResult>

/** A batch entry (partitions/changed, fetch) that named an unknown or refused queue. */
export const entryError = z.object({ queue: z.string(), partition: z.string().optional(), error: z.string(), message: z.string() })

/** total, pending and processing of a queue or partition. */
export const messageTotals = z.object({ total: count, pending: count, processing: count })

/** Where one message stands for its groups, as the message and status reads compute it. */
export const messageStatus = z.enum(['pending', 'processing', 'completed', 'dead_letter'])

/** The message counts of the resource and status reads; failed is always null (no such state here). */
export const messageStats = messageTotals.extend({ completed: count, failed: z.null(), deadLetter: count })

const STORED = { text: z.string(), int: z.number().int(), bool: z.boolean(), any: z.unknown() } as const

/** A queue's 21 options as _queue_options writes them from its row (the sink-hold pair is text and int there). */
export const queueOptions = z.object({
  ...(Object.fromEntries(Object.entries(QUEUE_OPTIONS).map(([key, kind]) => [key, STORED[kind]])) as {
    [K in QueueOptionKey]: (typeof STORED)[(typeof QUEUE_OPTIONS)[K]]
  }),
  retentionSinkHold: z.string(),
  retentionSinkHoldMaxSeconds: z.number().int(),
})

/**
 * An answer the route sends as it is: checked against `schema`, then handed on as the procedure
 * built it, not as zod would rebuild it (in the schema's key order, unknown keys dropped), so the
 * route's bytes are the procedure's bytes.
 */
export function verbatim<S extends z.ZodType>(schema: S): z.ZodType<z.output<S>> {
  return z.custom<z.output<S>>().superRefine((value, ctx) => {
    const checked = schema.safeParse(value)
    if (!checked.success) for (const issue of checked.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path })
  })
}
