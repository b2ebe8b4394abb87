// How big one pop is: the batch (messages) and partitions (sweep width) a pop claims with, from what
// the client pinned, what it left to the broker (autopilot=true), and Queen's server defaults
// (docs/pop-autopilot.md). A pinned knob is never changed.
import type { PopRequestArg } from '../db/procedures.js'
import type { PopQuery } from './query.js'

/** Queen's server default when a pop names no batch and autopilot does not choose one. */
export const DEFAULT_BATCH = 200
export const DEFAULT_PARTITIONS = 1
/** A conflating pop delivers one frame per partition, so its width is its message budget, at most this. */
export const CONFLATION_MAX_PARTITIONS = 64

export type AutopilotMode = 'on' | 'shadow' | 'off'

export interface PopSizing {
  batch: number
  partitions: number
  autopilot?: NonNullable<PopRequestArg['autopilot']>
}

/**
 * `wildcard`: the queue-scoped route without a pinned partition, the only one with a width to
 * choose. `waiters`: the group's other pops parked on this queue in this process.
 */
export function popSizing(q: PopQuery, wildcard: boolean, mode: AutopilotMode, waiters: () => number): PopSizing {
  const batch = q.batch ?? DEFAULT_BATCH
  if (q.conflation) {
    // Queen reads a conflating pop's width as its batch when it is left out, within 64.
    return { batch, partitions: Math.min(q.partitions ?? batch, CONFLATION_MAX_PARTITIONS) }
  }
  const partitions = q.partitions ?? DEFAULT_PARTITIONS
  const leftOut = q.batch === undefined || q.partitions === undefined
  if (!q.autopilot || mode === 'off' || !leftOut || !wildcard || q.consumerGroup === undefined) return { batch, partitions }
  return {
    batch,
    partitions,
    autopilot: { batch: q.batch === undefined, partitions: q.partitions === undefined, waiters: waiters(), apply: mode === 'on' },
  }
}

/** The echo a 1.2+ client reads back: the knobs the claim used, and no pacing advice (work was found). */
export function autopilotEcho(chosen: { partitions: number; batch: number; applied: boolean } | null | undefined) {
  return chosen?.applied ? { autopilot: { partitions: chosen.partitions, batch: chosen.batch, waitMs: 0 } } : {}
}
