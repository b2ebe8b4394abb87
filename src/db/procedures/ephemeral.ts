// Ephemeral queues: rings in UNLOGGED tables, per-group cursors and leases, the kill switch
// (sql/procedures/034_ephemeral.sql, docs/ephemeral.md).
import { z } from 'zod'
import { brokerWide, defineFamily, tenantScoped } from '../procedure.js'
import { count } from './shared.js'

const ephemeralMessage = z.object({ id: z.string(), partition: z.string(), attempts: count, payload: z.unknown() })
const windowBuffer = z.object({ ms: count, count }).nullable()
const options = z.object({
  maxBytes: count,
  maxLength: count,
  policy: z.string(),
  ttlSeconds: count,
  leaseSeconds: count,
  retryLimit: count,
  windowBuffer,
})
const groupPending = z.object({ group: z.string().nullable(), pending: count })
const queueGauges = z.object({
  queue: z.string(),
  tier: z.enum(['declared', 'implicit']),
  depth: count,
  bytes: count,
  partitions: count,
  groups: count,
  drops: z.object({ bounds: count, ttl: count, retry: count }),
  options,
  groupDepths: z.array(groupPending),
})
const depth = z.object({
  queue: z.string(),
  group: z.string().nullable(),
  tier: z.enum(['declared', 'implicit']),
  pending: count,
  partitionsPending: count,
  bytes: count,
  partitions: z.array(z.object({ partition: z.string(), pending: count, bytes: count })),
  groups: z.array(z.object({ group: z.string().nullable(), pending: count, skipped: count })),
})
const system = z.object({ ephemeralEnabled: z.boolean(), cellBytes: count, queues: count, epoch: z.string() })

export type EphemeralQueueGauges = z.infer<typeof queueGauges>

export const ephemeralFamily = defineFamily({
  /** Appends payloads to one partition, all or nothing; QMEFL when the bounds refuse. */
  ephemeral_push_v1: tenantScoped<{ tenant: string; queue: string; partition: string; payloads: unknown[] }>({
    tenant: 'text',
    queue: 'text',
    partition: 'text',
    payloads: 'jsonb',
  }).returns(z.object({ pushed: count })),
  /** Several pushes to one queue in one transaction (Node's push fusion); one count per group, all or nothing. */
  ephemeral_push_many_v1: tenantScoped<{ tenant: string; queue: string; groups: { partition: string; payloads: unknown[] }[] }>({
    tenant: 'text',
    queue: 'text',
    groups: 'jsonb',
  }).returns(z.object({ pushed: z.array(count) })),
  /** Redeliveries first, then new messages past the group's cursors; never sleeps. */
  ephemeral_pop_v1: tenantScoped<{ tenant: string; queue: string; partition: string | null; group: string; batch: number; autoAck: boolean }>({
    tenant: 'text',
    queue: 'text',
    partition: 'text',
    group: 'text',
    batch: 'int',
    autoAck: 'boolean',
  }).returns(z.object({ messages: z.array(ephemeralMessage), windowBuffer })),
  /**
   * As ephemeral_pop_v1, the deliveries as parallel arrays the broker shapes into messages
   * (src/ephemeral/pop-result.ts); `shares`, the batches of the pops a fused call stands for, leases each apart.
   */
  ephemeral_pop_v2: tenantScoped<{ tenant: string; queue: string; partition: string | null; group: string; batch: number; autoAck: boolean; shares?: number[] }>({
    tenant: 'text',
    queue: 'text',
    partition: 'text',
    group: 'text',
    batch: 'int',
    autoAck: 'boolean',
    shares: 'int[]',
  }).returns(
    z
      .object({ epoch: z.string(), seqs: z.array(z.string()), partitions: z.array(z.string()), attempts: z.array(count), payloads: z.array(z.unknown()), windowBuffer })
      .refine((r) => r.partitions.length === r.seqs.length && r.attempts.length === r.seqs.length && r.payloads.length === r.seqs.length, 'every array as long as seqs'),
  ),
  /** One verdict per ack: acked, redelivered, stale or unknown. */
  ephemeral_ack_v1: tenantScoped<{ tenant: string; queue: string; group: string; acks: { id: string; status?: string }[] }>({
    tenant: 'text',
    queue: 'text',
    group: 'text',
    acks: 'jsonb',
  }).returns(z.object({ results: z.array(z.object({ id: z.string(), outcome: z.enum(['acked', 'redelivered', 'stale', 'unknown']) })) })),
  /** Settles deliveries the broker parsed from ids; the broker turns what settled into verdicts. */
  ephemeral_ack_v2: tenantScoped<{ tenant: string; queue: string; group: string; ords: number[]; epochs: string[]; seqs: string[]; attempts: number[]; back: boolean[] }>({
    tenant: 'text',
    queue: 'text',
    group: 'text',
    ords: 'int[]',
    epochs: 'text[]',
    seqs: 'bigint[]',
    attempts: 'int[]',
    back: 'boolean[]',
  }).returns(z.object({ epoch: z.string(), acked: z.array(count), redelivered: z.array(count) })),
  /** Stores a queue's declaration as sent. */
  ephemeral_configure_v1: tenantScoped<{ tenant: string; queue: string; options: Record<string, unknown> }>({
    tenant: 'text',
    queue: 'text',
    options: 'jsonb',
  }).returns(z.object({ queue: z.string(), options: z.record(z.string(), z.unknown()) })),
  /** Drops the contents, voids the leases, rewinds the cursors; the declaration stays. */
  ephemeral_reset_v1: tenantScoped<{ tenant: string; queue: string }>({ tenant: 'text', queue: 'text' }).returns(
    z.object({ queue: z.string(), dropped: count }),
  ),
  /** Removes contents, groups and declaration. */
  ephemeral_delete_v1: tenantScoped<{ tenant: string; queue: string }>({ tenant: 'text', queue: 'text' }).returns(
    z.object({ queue: z.string(), deleted: z.boolean(), declared: z.boolean() }),
  ),
  /** Every ephemeral queue of the tenant with its gauges. */
  ephemeral_queues_v1: tenantScoped<{ tenant: string }>({ tenant: 'text' }).returns(
    z.object({ queues: z.array(queueGauges), count, cellBytes: count }),
  ),
  /** One queue's depth per partition and group; QMENF when absent. */
  ephemeral_depth_v1: tenantScoped<{ tenant: string; queue: string; group?: string }>({ tenant: 'text', queue: 'text', group: 'text' }).returns(depth),
  /** The kill switch and the broker-wide gauges. */
  ephemeral_system_v1: brokerWide<Record<string, never>>({}).returns(system),
  /** Turns the ephemeral surface on or off for every replica. */
  ephemeral_system_set_v1: brokerWide<{ enabled: boolean }>({ enabled: 'boolean' }).returns(system),
})
