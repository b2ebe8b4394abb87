// retention: delete-and-advance of expired segments, sink hold, and housekeeping of traces,
// metrics and DLQ rows (ENGINE 7.1-7.3, 7.5). Its step procedure, log_retention_step_v1, arrives
// with the resources issue (#6).
import type { Lane } from './lane.js'

export const retention: Lane = {
  name: 'retention',
  intervalMs: (config) => config.RETENTION_INTERVAL_MS,
  defaultLimit: 1_000,
}
