// Maintenance lane leases (sql/procedures/001_lanes.sql): which replica or isolate runs a lane.
import { z } from 'zod'
import { brokerWide, defineFamily } from '../procedure.js'

// A lane's saved resume point: cron/runner.ts stores {next} and reads it back; '{}' before any run.
const laneProgress = z.looseObject({ next: z.string().nullable().optional() })

export const lanesFamily = defineFamily({
  /** Claims a maintenance lane when it is free (or its holder died) and due; null when not claimed. */
  lane_claim_v1: brokerWide<{ lane: string; token: string; interval: string; ttl: string; force?: boolean; now?: Date }>({
    lane: 'text',
    token: 'uuid',
    interval: 'interval',
    ttl: 'interval',
    force: 'boolean',
    now: 'timestamptz',
  }).returns(laneProgress.nullable()),
  /** Extends the holder's lease and saves its resume point; false when the lease was lost. */
  lane_renew_v1: brokerWide<{ lane: string; token: string; ttl: string; progress: unknown; now?: Date }>({
    lane: 'text',
    token: 'uuid',
    ttl: 'interval',
    progress: 'jsonb',
    now: 'timestamptz',
  }).returns(z.boolean()),
  /** Releases the lease (only the holder's) and records the run. */
  lane_release_v1: brokerWide<{ lane: string; token: string; progress: unknown; result: unknown; now?: Date }>({
    lane: 'text',
    token: 'uuid',
    progress: 'jsonb',
    result: 'jsonb',
    now: 'timestamptz',
  }).returns(z.boolean()),
})
