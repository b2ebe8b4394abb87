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
  /** Seconds this claim's lease lasts instead of the queue's leaseTime. */
  leaseSeconds?: number
  /** The knobs left to the broker (docs/pop-autopilot.md); `apply: false` only reports its choice. */
  autopilot?: { batch: boolean; partitions: boolean; waiters: number; apply: boolean }
  /** Present when the request declared conflation: the answer then says the group's policy even when empty. */
  conflationAsked?: true
}

/** What autopilot chose for one pop, with the signals it chose from. */
export const popAutopilot = z.object({
  partitions: z.number().int(),
  batch: z.number().int(),
  ready: z.number().int(),
  backlog: z.number(),
  applied: z.boolean(),
})

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
    conflation: z.boolean().nullish(),
    autopilot: popAutopilot.nullish(),
  })
  .transform(({ claims, ...rest }) => ({
    ...rest,
    messages: claims.flatMap((claim) => claimMessages(claim, rest.leaseId ?? '', rest.consumerGroup)),
  }))

/** A pop's answer, its claims expanded into messages. */
export type PopResult = z.output<typeof popResult>

export const popFamily = defineFamily({
  /** Leases up to `batch` messages from up to `partitions` partitions under one lease id. */
  log_pop_v1: tenantScoped<{ tenant: string; request: PopRequestArg; now?: Date }>({ tenant: 'text', request: 'jsonb', now: 'timestamptz' }).returns(popResult),
})
