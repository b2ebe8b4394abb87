// Broker-wide switches (push and pop maintenance) and the stats refresh. Both flags are read with
// the admin-only GET /api/v1/system/maintenance; a session that is not admin is told so instead of
// being shown a 403.
import { capabilities, maintenanceButton, refreshStatsButton } from './actions.js'
import { api, loadSettings } from './api.js'
import { h, statsBadge, type Child, type Navigate } from './dom.js'
import type { QueueListing } from './queues.js'

const flag = (on: boolean, testid: string) => h('strong', { class: on ? 'warn' : 'ok', 'data-testid': testid }, on ? 'on' : 'off')

export async function systemView(navigate: Navigate): Promise<Child[]> {
  const [caps, settings, { statsAge }] = await Promise.all([capabilities(), loadSettings(), api<QueueListing>('/api/v1/resources/queues')])
  const stats = [h('h2', {}, 'Cached statistics'), h('p', {}, 'The stats lane last reconciled this tenant\'s queues: ', statsBadge(statsAge, settings.staleAfterSeconds), ' ',
    caps.admin ? refreshStatsButton(navigate) : null)]
  if (!caps.admin) {
    return [h('h1', {}, 'System'), h('p', { class: 'muted', 'data-testid': 'not-admin' }, 'Maintenance mode is read and switched by the admin role only; this session is not admin.'), stats]
  }
  const m = await api<{ maintenanceMode: boolean; popMaintenanceMode: boolean }>('/api/v1/system/maintenance')
  return [
    h('h1', {}, 'System'),
    h('h2', {}, 'Maintenance (every tenant of this broker)'),
    h('dl', { class: 'facts' },
      h('dt', {}, 'Push maintenance'), h('dd', {}, flag(m.maintenanceMode, 'maintenance-push-state'), ' — pushes answer 503 with Retry-After while on ', maintenanceButton('push', m.maintenanceMode, navigate)),
      h('dt', {}, 'Pop maintenance'), h('dd', {}, flag(m.popMaintenanceMode, 'maintenance-pop-state'), ' — pops answer 204 and take no lease while on ', maintenanceButton('pop', m.popMaintenanceMode, navigate))),
    stats,
  ]
}
