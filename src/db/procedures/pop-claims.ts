// What a pop delivers: log_pop_v1 answers each claimed partition compactly (the stored frames, their
// offsets, each segment's createdAt once, the cursor's retry state), because building one object
// per message in SQL was a third of a pop's CPU. This module turns a claim into the messages the
// pop route sends, and decides each message's attempt count.
import { z } from 'zod'
import { offset } from './shared.js'

/** A delivered message, as the pop route receives it. */
export interface PoppedFrame {
  queue: string
  partition: string
  partitionId: string
  offset: number
  id: string
  transactionId: string
  traceId: string | null
  producerSub: string | null
  createdAt: string
  enc: boolean
  data: unknown
  leaseId: string
  consumerGroup: string
  retryCount: number
}

// A frame as stored in a segment.
const storedFrame = z.object({
  id: z.string(),
  txn: z.string(),
  trace: z.string().nullable().optional(),
  sub: z.string().nullable().optional(),
  enc: z.boolean().optional(),
  data: z.unknown(),
})

/** One claimed partition of a pop's answer. */
export const popClaim = z.object({
  queue: z.string(),
  partition: z.string(),
  partitionId: z.string(),
  retryOffset: offset.nullable(),
  retryCount: z.number().int(),
  // Per-frame delivery attempts from attemptFrom on (issue #20), null until a round expired or failed.
  attemptFrom: offset.nullish(),
  attempts: z.array(z.number().int()).nullish(),
  offsets: z.array(offset),
  frames: z.array(storedFrame),
  segments: z.array(z.tuple([offset, z.string()])),
})
type PopClaim = z.infer<typeof popClaim>

/** A message's own attempt count: its frame's delivery attempts, or the governing retry count. */
function attemptsOf(claim: PopClaim, offset: number): number {
  const counted = claim.attempts && claim.attemptFrom != null ? (claim.attempts[offset - claim.attemptFrom] ?? 0) : 0
  return Math.max(counted, offset === claim.retryOffset ? claim.retryCount : 0)
}

/** The messages of one claim, in offset order, each under the pop's lease and group. */
export function claimMessages(claim: PopClaim, leaseId: string, consumerGroup: string): PoppedFrame[] {
  let segment = 0
  return claim.frames.map((f, i) => {
    const offset = claim.offsets[i]!
    // Offsets ascend, and so do the segments' base offsets: a frame's segment is the last one at or below it.
    while (segment + 1 < claim.segments.length && claim.segments[segment + 1]![0] <= offset) segment++
    return {
      queue: claim.queue,
      partition: claim.partition,
      partitionId: claim.partitionId,
      offset,
      id: f.id,
      transactionId: f.txn,
      traceId: f.trace ?? null,
      producerSub: f.sub ?? null,
      createdAt: claim.segments[segment]![1],
      enc: f.enc ?? false,
      data: f.data ?? null,
      leaseId,
      consumerGroup,
      retryCount: attemptsOf(claim, offset),
    }
  })
}
