// Pop (sql/procedures/004_log_pop.sql): leases an offset range of up to `partitions` partitions
// under one lease id. The claims are expanded into messages by pop-claims.ts.
import { z } from 'zod'
import { defineFamily, tenantScoped } from '../procedure.js'
import { claimMessages, popClaim } from './pop-claims.js'

export interface PopRequestArg {
  queue?: string
  partition?: string
  namespace?: string
  task?: string
  group: string
  batch: number
  partitions: number
  autoAck: boolean
  subscriptionMode: 'all' | 'new' | 'timestamp'
  subscriptionFrom?: string
  /** A named group's delivery policy at first contact; absent means 'all'. */
  delivery?: 'all' | 'conflate'
  maxBytes: number
}

const popResult = z
  .object({
    claims: z.array(popClaim),
    leaseId: z.string().nullable(),
    consumerGroup: z.string(),
    partitionsClaimed: z.number().int(),
    minPopWaitMs: z.number().int(),
    queue: z.string().nullable().optional(),
    partition: z.string().nullable().optional(),
    partitionId: z.string().nullable().optional(),
    windowBufferActive: z.boolean(),
    paused: z.boolean(),
  })
  .transform(({ claims, ...rest }) => ({
    ...rest,
    messages: claims.flatMap((claim) => claimMessages(claim, rest.leaseId ?? '', rest.consumerGroup)),
  }))

export const popFamily = defineFamily({
  /** Leases up to `batch` messages from up to `partitions` partitions under one lease id. */
  log_pop_v1: tenantScoped<{ tenant: string; request: PopRequestArg; now?: Date }>({ tenant: 'text', request: 'jsonb', now: 'timestamptz' }).returns(popResult),
})
