// Queen 1.6's timers (sql/procedures/033_timers.sql, docs/timers.md).
import { z } from 'zod'
import { brokerWide, defineFamily, tenantScoped } from '../procedure.js'

/** A timer operation as src/timers/ops.ts encodes it for the procedures. */
export type TimerOpArg =
  | {
      op: 'schedule' | 'reschedule'
      queue: string
      timerKey: string
      partition: string
      delayMs: number
      txn: string
      payload: string
      data: unknown
      enc: boolean
      producerSub?: string
    }
  | { op: 'cancel'; queue: string; timerKey: string; txn?: string }

/** One operation's verdict: scheduled, rescheduled, cancelled or absent. */
export const timerVerdict = z.looseObject({ ok: z.boolean(), status: z.string(), queue: z.string(), timerKey: z.string() })

/** The queues a fire pushed to, so the caller can wake the pops parked on them. */
const fired = z.object({
  processed: z.number().int(),
  next: z.string().nullable(),
  queues: z.array(z.object({ tenant: z.string(), queue: z.string() })),
})

const switches = z.object({ kvEnabled: z.boolean(), timersScheduleEnabled: z.boolean(), timersFireEnabled: z.boolean() })

export const timersFamily = defineFamily({
  /** The operator's kill switches for the key/value store, timer scheduling and the timer fire. */
  kv_timers_switches_v1: brokerWide<Record<string, never>>({}).returns(switches),
  /** Sets the switches given, broker-wide; answers all three as they now are. */
  kv_timers_switches_set_v1: brokerWide<{ kv?: boolean | null; timersSchedule?: boolean | null; timersFire?: boolean | null }>({
    kv: 'boolean',
    timersSchedule: 'boolean',
    timersFire: 'boolean',
  }).returns(switches),
  /** Schedules, reschedules and cancels in order; refused while timers are switched off. */
  timers_apply_v1: tenantScoped<{ tenant: string; ops: TimerOpArg[]; horizonMs: number; now?: Date }>({
    tenant: 'text',
    ops: 'jsonb',
    horizonMs: 'bigint',
    now: 'timestamptz',
  }).returns(z.object({ results: z.array(timerVerdict.extend({ index: z.number().int() })) })),
  /** Cancels one timer; never refused by the switch. */
  timers_cancel_v1: tenantScoped<{ tenant: string; queue: string; timerKey: string; txn?: string | null }>({
    tenant: 'text',
    queue: 'text',
    timerKey: 'text',
    txn: 'text',
  }).returns(timerVerdict),
  /** One pending timer with its payload as sent, or {found:false}. */
  timers_get_v1: tenantScoped<{ tenant: string; queue: string; timerKey: string }>({ tenant: 'text', queue: 'text', timerKey: 'text' }).returns(
    z.looseObject({ found: z.boolean() }),
  ),
  /** A keyset page of one queue's pending timers, without payloads. */
  timers_list_v1: tenantScoped<{ tenant: string; queue: string; after?: string | null; limit?: number }>({
    tenant: 'text',
    queue: 'text',
    after: 'text',
    limit: 'int',
  }).returns(z.object({ rows: z.array(z.looseObject({ timerKey: z.string() })), truncated: z.boolean(), nextAfter: z.string().nullable() })),
  /** How many pending timers of one queue have keys starting with a literal prefix. */
  timers_count_v1: tenantScoped<{ tenant: string; queue: string; prefix: string }>({ tenant: 'text', queue: 'text', prefix: 'text' }).returns(
    z.object({ count: z.number().int() }),
  ),
  /** One bounded step of the fire, over every tenant's due timers. */
  timers_fire_step_v1: brokerWide<{ limit: number; now?: Date }>({ limit: 'int', now: 'timestamptz' }).returns(fired),
  /** Fires the due timers of one queue of the tenant, for a pop about to read it. */
  timers_fire_queue_v1: tenantScoped<{ tenant: string; queue: string; limit: number; now?: Date }>({
    tenant: 'text',
    queue: 'text',
    limit: 'int',
    now: 'timestamptz',
  }).returns(fired),
})
