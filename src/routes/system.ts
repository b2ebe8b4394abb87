// System maintenance (docs/status.md): two broker-wide flags in queen.system_state that the push
// and pop procedures read themselves, so a switch made through one replica or isolate applies on
// every other from its next request. Reads are admin; the switches are admin and refuse
// tenant-bound tokens (brokerWide, design decision 41). There is no local push buffer, so Queen's
// buffer fields are true zeros.
import { z } from 'zod'
import { ROLE_SETS, route } from '../http/route.js'
import { sentence, worded } from '../http/validate.js'

export const switchBody = worded(z.object({ enabled: z.boolean({ error: 'enabled (boolean) is required' }) }), sentence)

// The key/value and timer kill switches: any subset of the three, each a boolean; an unknown field
// is refused by name rather than ignored, since it may have been meant to switch something off.
const kvTimersBody = worded(
  z.strictObject({ kv: z.boolean().optional(), timersSchedule: z.boolean().optional(), timersFire: z.boolean().optional() }),
  sentence,
)

const read = { roles: ROLE_SETS.A, tenant: 'required', body: 'none' } as const
const write = { roles: ROLE_SETS.A, tenant: 'required', body: 'required', brokerWide: true, request: { body: switchBody } } as const
const NO_BUFFER = { bufferedMessages: 0, bufferHealthy: true } as const

const pushMessage = (on: boolean) =>
  on ? 'Maintenance mode enabled: pushes answer 503 maintenance with Retry-After until it is turned off' : 'Maintenance mode disabled: pushes are accepted'
const popMessage = (on: boolean) =>
  on ? 'Pop maintenance mode enabled: pops answer 204 and take no lease until it is turned off' : 'Pop maintenance mode disabled: pops deliver'

export const systemRoutes = [
  route({ method: 'GET', path: '/api/v1/system/kv-timers', summary: 'Read the key/value and timer kill switches', ...read }, async (c) =>
    c.json(await c.get('db').brokerWide.call('kv_timers_switches_v1', {})),
  ),
  route(
    { method: 'POST', path: '/api/v1/system/kv-timers', summary: 'Pause or resume the key/value store, timer scheduling or the timer fire (broker-wide)', ...write, request: { body: kvTimersBody } },
    async (c, { body }) => {
      const switches = await c.get('db').brokerWide.call('kv_timers_switches_set_v1', { kv: body.kv ?? null, timersSchedule: body.timersSchedule ?? null, timersFire: body.timersFire ?? null })
      c.get('log').warn('kv/timers switches set', { requestId: c.get('requestId'), ...switches })
      return c.json(switches)
    },
  ),
  route({ method: 'GET', path: '/api/v1/system/maintenance/pop', summary: 'Read the pop maintenance flag', ...read }, async (c) => {
    const { popMaintenanceMode } = await c.get('db').brokerWide.call('system_maintenance_v1', {})
    return c.json({ popMaintenanceMode, message: popMessage(popMaintenanceMode) })
  }),
  route({ method: 'POST', path: '/api/v1/system/maintenance/pop', summary: 'Turn pop maintenance on or off (broker-wide)', ...write }, async (c, { body }) => {
    const { popMaintenanceMode } = await c.get('db').brokerWide.call('system_maintenance_set_v1', { mode: 'pop', enabled: body.enabled })
    c.get('log').warn('pop maintenance switched', { requestId: c.get('requestId'), enabled: popMaintenanceMode })
    return c.json({ popMaintenanceMode, message: popMessage(popMaintenanceMode) })
  }),
  route({ method: 'GET', path: '/api/v1/system/maintenance', summary: 'Read the maintenance flags', ...read }, async (c) => {
    const flags = await c.get('db').brokerWide.call('system_maintenance_v1', {})
    return c.json({ ...flags, ...NO_BUFFER, bufferStats: { pending: 0, failed: 0 } })
  }),
  route({ method: 'POST', path: '/api/v1/system/maintenance', summary: 'Turn push maintenance on or off (broker-wide)', ...write }, async (c, { body }) => {
    const { maintenanceMode } = await c.get('db').brokerWide.call('system_maintenance_set_v1', { mode: 'push', enabled: body.enabled })
    c.get('log').warn('push maintenance switched', { requestId: c.get('requestId'), enabled: maintenanceMode })
    return c.json({ maintenanceMode, ...NO_BUFFER, message: pushMessage(maintenanceMode) })
  }),
]
