// System maintenance (API 5.15): two broker-wide flags in queen.system_state that the push and pop
// procedures read themselves, so a switch made through one replica or isolate applies on every
// other from its next request. Reads are admin; the switches are admin and refuse tenant-bound
// tokens (brokerWide, API 4.4). There is no local push buffer, so Queen's buffer fields are true zeros.
import type { Context } from 'hono'
import { badRequest } from '../errors.js'
import type { AppEnv } from '../http/env.js'
import { ROLE_SETS, route } from '../http/route.js'

const read = { roles: ROLE_SETS.A, tenant: 'required', body: 'none' } as const
const write = { roles: ROLE_SETS.A, tenant: 'required', body: 'required', brokerWide: true } as const
const NO_BUFFER = { bufferedMessages: 0, bufferHealthy: true } as const

function enabledOf(c: Context<AppEnv>): boolean {
  const { enabled } = c.var.body
  if (typeof enabled !== 'boolean') throw badRequest('enabled (boolean) is required')
  return enabled
}

const pushMessage = (on: boolean) =>
  on ? 'Maintenance mode enabled: pushes answer 503 maintenance with Retry-After until it is turned off' : 'Maintenance mode disabled: pushes are accepted'
const popMessage = (on: boolean) =>
  on ? 'Pop maintenance mode enabled: pops answer 204 and take no lease until it is turned off' : 'Pop maintenance mode disabled: pops deliver'

export const systemRoutes = [
  route({ method: 'GET', path: '/api/v1/system/maintenance/pop', ...read }, async (c) => {
    const { popMaintenanceMode } = await c.var.db.call('system_maintenance_v1', {})
    return c.json({ popMaintenanceMode, message: popMessage(popMaintenanceMode) })
  }),
  route({ method: 'POST', path: '/api/v1/system/maintenance/pop', ...write }, async (c) => {
    const { popMaintenanceMode } = await c.var.db.call('system_maintenance_set_v1', { mode: 'pop', enabled: enabledOf(c) })
    c.var.log.warn('pop maintenance switched', { requestId: c.var.requestId, enabled: popMaintenanceMode })
    return c.json({ popMaintenanceMode, message: popMessage(popMaintenanceMode) })
  }),
  route({ method: 'GET', path: '/api/v1/system/maintenance', ...read }, async (c) => {
    const flags = await c.var.db.call('system_maintenance_v1', {})
    return c.json({ ...flags, ...NO_BUFFER, bufferStats: { pending: 0, failed: 0 } })
  }),
  route({ method: 'POST', path: '/api/v1/system/maintenance', ...write }, async (c) => {
    const { maintenanceMode } = await c.var.db.call('system_maintenance_set_v1', { mode: 'push', enabled: enabledOf(c) })
    c.var.log.warn('push maintenance switched', { requestId: c.var.requestId, enabled: maintenanceMode })
    return c.json({ maintenanceMode, ...NO_BUFFER, message: pushMessage(maintenanceMode) })
  }),
]
