// Admin queue routes: clearing a queue or one partition, the partition listing, and queue delete
// (sql/procedures/025_admin_queues.sql). Every answer is sent as it is, hence `verbatim`.
import { z } from 'zod'
import { defineFamily, tenantScoped } from '../procedure.js'
import { count, instant, verbatim } from './shared.js'

/** Both outcomes are bodies (delete-before-create is the SDKs' cleanup idiom). */
const queueDeleted = z.object({ deleted: z.boolean(), queue: z.string(), existed: z.boolean(), message: z.string().optional() })

const cleared = z.object({
  cleared: z.literal(true),
  /** Retained, undeleted frames removed. */
  count,
  queue: z.string(),
  /** The partition cleared, or "all". */
  partition: z.string(),
})

const partitionsPage = z.object({
  partitions: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      queue: z.string(),
      namespace: z.string(),
      task: z.string(),
      queuePriority: z.number().int(),
      createdAt: instant,
      depth: count,
      processing: count,
      total: count,
    }),
  ),
  pagination: z.object({ limit: z.number().int(), offset: z.number().int(), total: count }),
})

export const adminQueuesFamily = defineFamily({
  /** Advances the log start of every partition in scope; QM404 for an unknown queue, QMNFP for an unknown partition. */
  queue_clear_v1: tenantScoped<{ tenant: string; queue: string; partition?: string }>({ tenant: 'text', queue: 'text', partition: 'text' }).returns(
    verbatim(cleared),
  ),
  /** One page of partitions with depth. */
  partition_list_v1: tenantScoped<{ tenant: string; filter: { queue?: string; minDepth: number; limit: number; offset: number }; now?: Date }>({
    tenant: 'text',
    filter: 'jsonb',
    now: 'timestamptz',
  }).returns(verbatim(partitionsPage)),
  /** Deletes a queue and everything in it, in one transaction. */
  delete_queue_v1: tenantScoped<{ tenant: string; queue: string }>({ tenant: 'text', queue: 'text' }).returns(verbatim(queueDeleted)),
})
