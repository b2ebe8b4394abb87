// Consumer-group administration and the delivery policy (sql/procedures/021_consumer_groups.sql).
// Every answer is sent as it is, hence `verbatim`.
import { z } from 'zod'
import { defineFamily, tenantScoped } from '../procedure.js'
import { count, instant, offset, verbatim } from './shared.js'

/** One (group, queue) pair of the listing. */
const listedGroup = z.object({
  name: z.string(),
  topics: z.array(z.string()),
  queueName: z.string(),
  /** Distinct live lease ids. */
  members: count,
  partitionsWithLag: count,
  totalLag: count,
  maxTimeLag: count,
  state: z.enum(['Stable', 'Lagging', 'Dead']),
  /** Null for a record written by the delivery route or a seek before the group's first pop. */
  subscriptionMode: z.string().nullable(),
  subscriptionTimestamp: instant.nullable(),
  subscriptionCreatedAt: instant.nullable(),
})

// snake_case, as Queen's wire format has it.
const laggingPartition = z.object({
  consumer_group: z.string(),
  queue_name: z.string(),
  partition_name: z.string(),
  partition_id: z.string(),
  worker_id: z.string().nullable(),
  offset_lag: count,
  time_lag_seconds: count,
  lag_hours: z.number(),
  oldest_unconsumed_at: instant.nullable(),
  last_consumed_at: instant.nullable(),
})

/** The group on one queue: its policy and every partition's cursor (committedOffset null without a cursor row). */
const groupOnQueue = z.object({
  conflation: z.boolean(),
  partitions: z.array(
    z.object({
      partition: z.string(),
      partitionId: z.string(),
      workerId: z.string().nullable(),
      lastConsumedAt: instant.nullable(),
      totalConsumed: count,
      offsetLag: count,
      timeLagSeconds: count,
      leaseActive: z.boolean(),
      committedOffset: offset.nullable(),
    }),
  ),
})

const deleted = z.object({
  success: z.literal(true),
  consumerGroup: z.string(),
  deletedPartitions: count,
  /** A subscription record was removed. */
  metadataDeleted: z.boolean(),
  /** Present when one queue was named. */
  queueName: z.string().optional(),
})

const resubscribed = z.object({ success: z.literal(true), consumerGroup: z.string(), newTimestamp: instant, rowsUpdated: count })

const sought = z.object({
  success: z.literal(true),
  consumerGroup: z.string(),
  queueName: z.string(),
  seekToEnd: z.boolean(),
  targetTimestamp: instant.nullable(),
  partitionsUpdated: count,
})

const partitionSought = z.object({
  success: z.literal(true),
  consumerGroup: z.string(),
  queueName: z.string(),
  partitionName: z.string(),
  updated: z.literal(true),
  seekToEnd: z.boolean(),
  targetTimestamp: instant.nullable(),
  committedOffset: offset,
  /** createdAt of the newest frame below the new cursor; null when there is none. */
  cursorMovedTo: instant.nullable(),
})

const delivery = z.object({ success: z.literal(true), consumerGroup: z.string(), queueName: z.string(), conflation: z.boolean() })

export const consumerGroupsFamily = defineFamily({
  /** One entry per (group, queue) the tenant's groups are on. */
  consumer_group_list_v1: tenantScoped<{ tenant: string; now?: Date }>({ tenant: 'text', now: 'timestamptz' }).returns(verbatim(z.array(listedGroup))),
  /** (group, partition) pairs lagging by at least minLagSeconds, worst first. */
  consumer_group_lagging_v1: tenantScoped<{ tenant: string; minLagSeconds: number; now?: Date }>({
    tenant: 'text',
    minLagSeconds: 'bigint',
    now: 'timestamptz',
  }).returns(verbatim(z.array(laggingPartition))),
  /** One group's cursors keyed by queue name; {} for an unknown group. */
  consumer_group_detail_v1: tenantScoped<{ tenant: string; group: string; now?: Date }>({ tenant: 'text', group: 'text', now: 'timestamptz' }).returns(
    verbatim(z.record(z.string(), groupOnQueue)),
  ),
  /** Deletes a group's cursors (and its subscription records) in every queue or one. */
  consumer_group_delete_v1: tenantScoped<{ tenant: string; group: string; queue?: string; deleteMetadata: boolean }>(
    { tenant: 'text', group: 'text', queue: 'text', deleteMetadata: 'boolean' },
  ).returns(verbatim(deleted)),
  /** Rewrites the subscription instant of the group's records in every queue. */
  consumer_group_subscription_v1: tenantScoped<{ tenant: string; group: string; timestamp: string }>(
    { tenant: 'text', group: 'text', timestamp: 'timestamptz' },
  ).returns(verbatim(resubscribed)),
  /** Seeks every partition of a queue by timestamp or to its end; QM404 for an unknown queue. */
  consumer_group_seek_v1: tenantScoped<{ tenant: string; group: string; queue: string; timestamp?: string; toEnd: boolean }>({
    tenant: 'text',
    group: 'text',
    queue: 'text',
    timestamp: 'timestamptz',
    toEnd: 'boolean',
  }).returns(verbatim(sought)),
  /** Seeks one partition to its end, or by timestamp; QM404 for an unknown queue, QMNFP for an unknown partition. */
  consumer_group_partition_seek_v1: tenantScoped<{ tenant: string; group: string; queue: string; partition: string; timestamp?: string }>({
    tenant: 'text',
    group: 'text',
    queue: 'text',
    partition: 'text',
    timestamp: 'timestamptz',
  }).returns(verbatim(partitionSought)),
  /** Sets a named group's delivery policy (conflation) on a queue. */
  consumer_group_delivery_v1: tenantScoped<{ tenant: string; group: string; queue: string; conflation: boolean }>({
    tenant: 'text',
    group: 'text',
    queue: 'text',
    conflation: 'boolean',
  }).returns(verbatim(delivery)),
})
