// Which database each tenant lives on (docs/placement.md), read with GET /api/v1/system/placements
// and changed with its two admin writes: place a tenant (PUT, moves no data) and move a tenant with
// its data (POST …/move). Only an admin session sees the page's figures; the buttons also need a
// token not bound to a tenant, because both writes change the directory every tenant is routed by
// (such tokens get 403).
import { actionButton, capabilities } from './actions.js'
import { api, seg, session, statusOf } from './api.js'
import { h, num, table, time, type Child, type Navigate } from './dom.js'

// A tenant no one uses: the probe below is refused by validation (400, nothing written) after the
// guard has admitted the session, or by the guard (403) for a token that may not change the directory.
const PROBE_TENANT = '__console_capability_probe__'
const writesBySession = new Map<string, Promise<boolean>>()

/** One tenant's row of the directory. */
interface Placement {
  tenant: string
  database: string
  state: string
  movingTo: string | null
  version: number
  updatedAt: string
}

/** GET /api/v1/system/placements. */
interface Directory {
  databases: string[]
  defaultDatabase: string
  version: number
  placements: Placement[]
}

interface Placed {
  tenant: string
  database: string
  version: number
}

interface Moved {
  moved: boolean
  tenant: string
  from: string
  to: string
  ms: { window: number }
}

/** Whether this session may place and move tenants: PUT with an empty body changes nothing. */
function mayWrite(): Promise<boolean> {
  const key = session.token() + '\u0000' + session.tenant()
  let asked = writesBySession.get(key)
  if (!asked) {
    asked = api('/api/v1/system/placements/' + PROBE_TENANT, { method: 'PUT', body: {} }).then(() => true, (error: unknown) => {
      const status = statusOf(error)
      if (status === 400) return true
      if (status === 401 || status === 403) return false
      writesBySession.delete(key)
      throw error
    })
    writesBySession.set(key, asked)
  }
  return asked
}

const databaseSelect = (databases: string[], key: string, selected: string | null) =>
  h('select', { 'data-key': key, 'data-testid': key }, databases.map((d) => h('option', { value: d, selected: d === selected }, d)))

function placeForm(databases: string[], navigate: Navigate): HTMLDivElement {
  const tenant = h('input', { type: 'text', placeholder: 'tenant', 'data-key': 'place-tenant', 'data-testid': 'place-tenant' })
  const database = databaseSelect(databases, 'place-database', null)
  const button = actionButton<{ tenant: string; database: string }>('Place', 'place',
    (a) => 'Place tenant "' + a.tenant + '" on database "' + a.database + '"? Its requests will be routed there from now on (every broker within one cache TTL). No data is moved: data it has elsewhere becomes unreachable (not deleted); use Move for a tenant that has data.',
    async (a) => {
      const r = await api<Placed>('/api/v1/system/placements/' + seg(a.tenant), { method: 'PUT', body: { database: a.database } })
      return 'Placed tenant ' + r.tenant + ' on ' + r.database + ' (directory version ' + r.version + ').'
    }, navigate, { ask: () => (tenant.value.trim() === '' ? null : { tenant: tenant.value.trim(), database: database.value }) })
  return h('div', { class: 'inline-form', 'data-testid': 'place-form' },
    h('label', {}, 'Tenant ', tenant), h('label', {}, 'Database ', database), button)
}

function moveControls(p: Placement, databases: string[], navigate: Navigate): Child {
  const others = databases.filter((d) => d !== p.database)
  if (p.state === 'moving') {
    // A fence left by a broker that died mid-move: PUT with force puts the tenant back where its data is.
    return actionButton('Lift fence', 'lift-' + p.tenant,
      'Lift the move fence of tenant "' + p.tenant + '" and keep it on "' + p.database + '"? Only do this when no move is running (a broker died mid-move): its requests are served again from "' + p.database + '", which holds all its data until a move completes.',
      async () => {
        const r = await api<Placed>('/api/v1/system/placements/' + seg(p.tenant), { method: 'PUT', body: { database: p.database, force: true } })
        return 'Lifted the fence of ' + r.tenant + '; it stays on ' + r.database + '.'
      }, navigate)
  }
  if (others.length === 0) return '–'
  const to = databaseSelect(others, 'move-to-' + p.tenant, others[0] ?? null)
  return h('span', { class: 'actions' }, to, actionButton<string>('Move', 'move-' + p.tenant,
    (target) => 'Move tenant "' + p.tenant + '" and all its data from "' + p.database + '" to "' + target + '"? Its requests answer 503 tenant_moving (with Retry-After) while the data is copied and verified; the copy on "' + p.database + '" is deleted afterwards.',
    async (target) => {
      const r = await api<Moved>('/api/v1/system/placements/' + seg(p.tenant) + '/move', { method: 'POST', body: { to: target } })
      if (!r.moved) return 'Tenant ' + r.tenant + ' already lives on ' + r.to + '; nothing moved.'
      return 'Moved tenant ' + r.tenant + ' from ' + r.from + ' to ' + r.to + ' (refused for ' + num(r.ms.window) + ' ms).'
    }, navigate, { ask: () => to.value }))
}

export async function placementsView(navigate: Navigate): Promise<Child[]> {
  const caps = await capabilities()
  if (!caps.admin) {
    return [h('h1', {}, 'Placements'), h('p', { class: 'muted', 'data-testid': 'not-admin' }, 'Tenant placement is read and changed by the admin role only; this session is not admin.')]
  }
  // The directory names every tenant and its database: operator-only, so a tenant-bound admin token
  // is refused (403) and told why instead of shown an error.
  const [listing, write] = await Promise.all([
    api<Directory>('/api/v1/system/placements').catch((error: unknown) => {
      if (statusOf(error) === 403) return null
      throw error
    }),
    mayWrite(),
  ])
  if (listing === null) {
    return [h('h1', {}, 'Placements'), h('p', { class: 'muted', 'data-testid': 'tenant-bound' }, 'This token is bound to a tenant, so it may neither read nor change the directory every tenant is routed by.')]
  }
  const { databases, defaultDatabase, version, placements } = listing
  const placedOn = (d: string) => placements.filter((p) => p.database === d).length
  const dbList = table<string>([
    { label: 'Database', cell: (d) => h('code', {}, d) },
    { label: 'Placed tenants', num: true, cell: (d) => num(placedOn(d)) },
    { label: '', cell: (d) => (d === defaultDatabase ? 'default: also every tenant without a placement' : '') },
  ], databases, 'No database configured.')
  dbList.setAttribute('data-testid', 'database-list')
  const list = table<Placement>([
    { label: 'Tenant', cell: (p) => p.tenant },
    { label: 'Database', cell: (p) => h('code', {}, p.database) },
    { label: 'State', cell: (p) => (p.state === 'moving' ? h('span', { class: 'badge stale' }, 'moving' + (p.movingTo ? ' to ' + p.movingTo : '')) : p.state) },
    { label: 'Version', num: true, cell: (p) => num(p.version) },
    { label: 'Updated', cell: (p) => time(p.updatedAt) },
    ...(write ? [{ label: '', cell: (p: Placement) => moveControls(p, databases, navigate) }] : []),
  ], placements, 'No tenant is placed: every tenant lives on the default database.', (p) => ({ 'data-tenant': p.tenant }))
  list.setAttribute('data-testid', 'placement-list')
  return [
    h('h1', {}, 'Placements'),
    h('p', { class: 'muted' }, 'Directory version ', h('strong', { 'data-testid': 'directory-version' }, num(version)), '. Brokers route by a cached copy of the directory, refreshed within one cache TTL.'),
    h('h2', {}, 'Databases'),
    dbList,
    h('h2', {}, 'Tenants'),
    list,
    write ? [h('h2', {}, 'Place a tenant'), placeForm(databases, navigate),
      h('p', { class: 'muted' }, 'Place is for a tenant with no data yet (a new customer); Move copies a tenant\'s data and verifies it before switching.')]
      : h('p', { class: 'muted', 'data-testid': 'tenant-bound' }, 'This token is bound to a tenant, so it may not change the directory every tenant is routed by.'),
  ]
}
