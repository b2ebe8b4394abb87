// eviction: maxWaitTimeSeconds, dropping frames that waited too long for a group (ENGINE 7.4).
// Its step procedure, log_evict_max_wait_step_v1, arrives with the resources issue (#6).
import type { Lane } from './lane.js'

export const eviction: Lane = {
  name: 'eviction',
  intervalMs: (config) => config.EVICTION_INTERVAL_MS,
  defaultLimit: 1_000,
}
