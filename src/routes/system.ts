// System maintenance (docs/status.md) and the ephemeral kill switch (docs/ephemeral.md):
// broker-wide flags in queen.system_state that the procedures read themselves, so a switch made
// through one replica or isolate applies on every other from its next request. With several
// databases each holds its own maintenance flags; every read and switch of them goes to all of
// them and reports each (src/db/placement/maintenance-fanout.ts). Reads and switches are admin and refuse
// tenant-bound tokens (brokerWide: the flags are the operator's, docs/security.md). There is no local push buffer, so Queen's
// buffer fields are true zeros.
import { z } from 'zod'
import { ROLE_SETS, route } from '../http/route.js'
import { sentence, worded } from '../http/validate.js'
import type { Context } from 'hono'
import type { AppEnv } from '../http/env.js'
import { onEveryDatabase, type DatabaseFlags } from '../db/placement/maintenance-fanout.js'

export const switchBody = worded(z.object({ enabled: z.boolean({ error: 'enabled (boolean) is required' }) }), sentence)

// A tenant's admin may read the flags (its pushes answer 503 maintenance anyway); only the operator
// may switch them, and only the operator is told which databases hold which.

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

/**
 * The ephemeral kill switch's answer. This broker has no per-tenant grants and no cell-wide byte
 * ceiling (docs/ephemeral.md), so grantedTenants is 0 with requireGrant false and cellMaxBytes null.
 */
const ephemeralState = (s: { ephemeralEnabled: boolean; cellBytes: number; queues: number; epoch: string }) => ({
  ephemeralEnabled: s.ephemeralEnabled,
  cellBytes: s.cellBytes,
  cellMaxBytes: null,
  queues: s.queues,
  grantedTenants: 0,
  requireGrant: false,
  epoch: s.epoch,
})

/** The per-database report, for a caller not bound to a tenant (database names are the operator's). */
const operatorView = (c: Context<AppEnv>, databases: DatabaseFlags[] | undefined) =>
  databases && c.get('principal').tenant === null ? { databases } : {}

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
    const { flags, databases } = await onEveryDatabase(c, (db) => db.call('system_maintenance_v1', {}))
    return c.json({ popMaintenanceMode: flags.popMaintenanceMode, message: popMessage(flags.popMaintenanceMode), ...operatorView(c, databases) })
  }),
  route({ method: 'POST', path: '/api/v1/system/maintenance/pop', summary: 'Turn pop maintenance on or off (every database)', ...write }, async (c, { body }) => {
    const { flags, databases } = await onEveryDatabase(c, (db) => db.call('system_maintenance_set_v1', { mode: 'pop', enabled: body.enabled }))
    c.get('log').warn('pop maintenance switched', { requestId: c.get('requestId'), enabled: flags.popMaintenanceMode })
    return c.json({ popMaintenanceMode: flags.popMaintenanceMode, message: popMessage(flags.popMaintenanceMode), ...(databases ? { databases } : {}) })
  }),
  route({ method: 'GET', path: '/api/v1/system/maintenance', summary: 'Read the maintenance flags', ...read }, async (c) => {
    const { flags, databases } = await onEveryDatabase(c, (db) => db.call('system_maintenance_v1', {}))
    return c.json({ ...flags, ...NO_BUFFER, bufferStats: { pending: 0, failed: 0 }, ...operatorView(c, databases) })
  }),
  route({ method: 'POST', path: '/api/v1/system/maintenance', summary: 'Turn push maintenance on or off (every database)', ...write }, async (c, { body }) => {
    const { flags, databases } = await onEveryDatabase(c, (db) => db.call('system_maintenance_set_v1', { mode: 'push', enabled: body.enabled }))
    c.get('log').warn('push maintenance switched', { requestId: c.get('requestId'), enabled: flags.maintenanceMode })
    return c.json({ maintenanceMode: flags.maintenanceMode, ...NO_BUFFER, message: pushMessage(flags.maintenanceMode), ...(databases ? { databases } : {}) })
  }),
  route({ method: 'GET', path: '/api/v1/system/ephemeral', summary: 'Read the ephemeral kill switch and gauges', ...read }, async (c) =>
    c.json(ephemeralState(await c.get('db').brokerWide.call('ephemeral_system_v1', {}))),
  ),
  route({ method: 'POST', path: '/api/v1/system/ephemeral', summary: 'Turn the ephemeral routes on or off (broker-wide)', ...write }, async (c, { body }) => {
    const state = await c.get('db').brokerWide.call('ephemeral_system_set_v1', { enabled: body.enabled })
    c.get('log').warn('ephemeral switched', { requestId: c.get('requestId'), enabled: state.ephemeralEnabled })
    return c.json(ephemeralState(state))
  }),
]
