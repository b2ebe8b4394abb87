// retained_bytes: segment counts and stored bytes per queue (ENGINE 8.1). Its step procedure,
// log_retained_bytes_step_v1, arrives with the resources issue (#6).
import type { Lane } from './lane.js'

export const retainedBytes: Lane = {
  name: 'retained_bytes',
  intervalMs: (config) => config.RETAINED_BYTES_INTERVAL_MS,
  defaultLimit: 200_000,
}
