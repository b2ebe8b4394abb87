// The registry of stored procedures the broker calls. A new query is a new procedure in sql/ plus
// one entry here; nothing else in the code base holds SQL that routes or lanes run.
import { z } from 'zod'
import type { OptionBag } from '../queue-options.js'
import { procedure, type Procedure } from './procedure.js'

const laneProgress = z.record(z.string(), z.unknown())

export const procedures = {
  /** Claims a maintenance lane when it is free (or its holder died) and due; null when not claimed. */
  lane_claim_v1: procedure<
    { lane: string; token: string; interval: string; ttl: string; force?: boolean; now?: Date },
    Record<string, unknown> | null
  >(
    'lane_claim_v1',
    { lane: 'text', token: 'uuid', interval: 'interval', ttl: 'interval', force: 'boolean', now: 'timestamptz' },
    laneProgress.nullable(),
  ),
  /** Extends the holder's lease and saves its resume point; false when the lease was lost. */
  lane_renew_v1: procedure<{ lane: string; token: string; ttl: string; progress: unknown; now?: Date }, boolean>(
    'lane_renew_v1',
    { lane: 'text', token: 'uuid', ttl: 'interval', progress: 'jsonb', now: 'timestamptz' },
    z.boolean(),
  ),
  /** Releases the lease (only the holder's) and records the run. */
  lane_release_v1: procedure<{ lane: string; token: string; progress: unknown; result: unknown; now?: Date }, boolean>(
    'lane_release_v1',
    { lane: 'text', token: 'uuid', progress: 'jsonb', result: 'jsonb', now: 'timestamptz' },
    z.boolean(),
  ),
  /** One bounded step of the dedup-hash purge: deletes expired log_txns rows. */
  log_dedup_purge_step_v1: procedure<{ limit: number; now?: Date }, { processed: number; next: string | null }>(
    'log_dedup_purge_step_v1',
    { limit: 'int', now: 'timestamptz' },
    z.object({ processed: z.number().int(), next: z.string().nullable() }),
  ),
  /** Creates or edits a queue's configuration under the four merge rules; the route's body verbatim. */
  configure_queue_v1: procedure<
    { tenant: string; queue: string; options: OptionBag; replace: boolean; now?: Date },
    { response: Record<string, unknown>; encryptionTurnedOff: boolean }
  >(
    'configure_queue_v1',
    { tenant: 'text', queue: 'text', options: 'jsonb', replace: 'boolean', now: 'timestamptz' },
    z.object({ response: z.record(z.string(), z.unknown()), encryptionTurnedOff: z.boolean() }),
  ),
} as const

export type Procedures = typeof procedures
export type ProcedureName = keyof Procedures
export type ArgsOf<N extends ProcedureName> = Procedures[N] extends Procedure<infer A, any> ? A : never
export type ResultOf<N extends ProcedureName> = Procedures[N] extends Procedure<any, infer R> ? R : never
