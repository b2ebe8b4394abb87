// The pop routes' query string: every parameter a Queen client sends to a pop, each either acted on
// or refused, so none is silently dropped (docs/compatibility.md). Sizing knobs stay undefined when
// absent: whether the broker or the server default fills them is sizing.ts's decision.
import { z } from 'zod'
import { instantOf, INT_MAX, qBool, qInt, qOneOf, qString } from '../http/query-schema.js'
import { NAME_MAX } from '../names.js'

export const DEFAULT_TIMEOUT_MS = 30_000
/** Most partitions one pop may claim; `partitions=0` (Queen's "no cap") reads as this. */
export const MAX_PARTITIONS = 1000

const longName = `must be at most ${NAME_MAX} characters`

/** An optional integer knob: absent stays undefined, values above `max` read as `max`. */
const qKnob = (min: number, max: number, description: string) =>
  z
    .string()
    .regex(/^\d+$/, 'must be an integer')
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`))
    .transform((n) => Math.min(n, max))
    .optional()
    .meta({ description })

/**
 * The pop options, in the order Queen's route reads them. subscriptionMode has no default here:
 * it defaults to DEFAULT_SUBSCRIPTION_MODE, which is configuration.
 */
export const popOptions = {
  consumerGroup: z.string().max(NAME_MAX, longName).optional(),
  subscriptionMode: qOneOf(['all', 'from_beginning', 'new', 'new-only']).optional(),
  subscriptionFrom: z
    .string()
    .transform((v, ctx) => {
      if (v.toLowerCase() === 'now') return 'now'
      const iso = instantOf(v)
      if (iso === null) ctx.addIssue({ code: 'custom', message: 'must be an ISO-8601 timestamp', params: { instant: true } })
      return iso ?? z.NEVER
    })
    .optional()
    .meta({ description: '"now" or an ISO-8601 timestamp' }),
  // This broker's own spelling of a named group's policy at first contact; queue mode ignores it.
  delivery: qOneOf(['all', 'conflate']).optional(),
  // Queen's spelling: last-value delivery for this consumer group (docs/consumer-groups.md).
  conflation: qBool(false),
  batch: qKnob(1, 10_000, 'integer ≥ 1, values above 10000 read as 10000; absent: the broker sizes it under autopilot=true, else 200'),
  partitions: z
    .string()
    .regex(/^\d+$/, 'must be an integer')
    .transform((v) => (Number(v) === 0 ? MAX_PARTITIONS : Math.min(Number(v), MAX_PARTITIONS)))
    .optional()
    .meta({ description: `integer; 0 means no cap (${MAX_PARTITIONS}); absent: the broker sizes it under autopilot=true, else 1` }),
  autopilot: qBool(false),
  autoAck: qBool(false),
  wait: qBool(false),
  timeout: qInt(DEFAULT_TIMEOUT_MS, 0, Number.MAX_SAFE_INTEGER),
  // Queen treats 0 or less as absent: the queue's leaseTime applies.
  leaseSeconds: z
    .string()
    .regex(/^-?\d+$/, 'must be an integer')
    .transform((v) => (Number(v) > 0 ? Math.min(Number(v), INT_MAX) : undefined))
    .optional()
    .meta({ description: "seconds this claim's lease lasts; absent or ≤ 0: the queue's leaseTime" }),
}

type Options = z.output<z.ZodObject<typeof popOptions>>

/** The combinations Queen refuses, because the silent version of each loses data. */
function refuseConflicts(q: Options, ctx: z.RefinementCtx) {
  if (!q.conflation) return
  const refuse = (message: string) => ctx.addIssue({ code: 'custom', path: ['conflation'], message })
  if (q.consumerGroup === undefined) refuse('requires a consumerGroup (queue mode has no delivery policy)')
  else if (q.autoAck) refuse('cannot be combined with autoAck=true (a conflated tail acked at delivery is lost on failure)')
  else if (q.delivery === 'all') refuse('contradicts delivery=all')
}

export const popQuery = z.object(popOptions).superRefine(refuseConflicts)

// Queen refuses a discovery pop without namespace and task before reading any option.
export const discoveryQuery = z.preprocess(
  (query, ctx) => {
    const { namespace, task } = query as Record<string, string | undefined>
    if (namespace === undefined && task === undefined) ctx.addIssue({ code: 'custom', message: 'namespace or task is required' })
    return query
  },
  z.object({ namespace: qString(), task: qString(), ...popOptions }).superRefine(refuseConflicts),
)

export type PopQuery = z.output<typeof popQuery>
