// Every maintenance lane, stats first: a Worker's scheduled() shares one budget across the due
// lanes (design decision 33), and the dashboards' numbers matter most; then timers, whose lateness
// a consumer sees.
import { dedupPurge } from './dedup-purge.js'
import type { Lane } from './lane.js'
import { eviction } from './eviction.js'
import { kvTimers } from './kv-timers.js'
import { retainedBytes } from './retained-bytes.js'
import { retention } from './retention.js'
import { statsRefresh } from './stats-refresh.js'

export const LANES: readonly Lane[] = [statsRefresh, kvTimers, retainedBytes, retention, eviction, dedupPurge]
