// The key/value store, read-only (docs/kv.md): every namespace with its key count
// (GET /api/v1/resources/kv/namespaces), then one namespace's keys in keyset pages
// (POST /api/v1/resources/kv/list), expired rows the sweep has not removed yet included and
// labelled, so what the count says can be found in the list. Writes stay with the API: a console
// that edits values would bypass the `expect` versions applications rely on.
import { api, seg } from './api.js'
import { h, link, num, table, time, type Child } from './dom.js'

const PAGE = 50
const PREVIEW_CHARS = 80

interface Namespace {
  namespace: string
  keys: number
}

interface KvRow {
  key: string
  version: number
  expiresAt: string | null
  updatedAt: string
  value: unknown
  expired: boolean
}

interface KvPage {
  rows: KvRow[]
  truncated: boolean
  nextAfter: string | null
}

const pagePath = (namespace: string, after?: string) => '/console/kv?namespace=' + seg(namespace) + (after !== undefined ? '&after=' + seg(after) : '')

/** The value's JSON cut to one line; the whole value opens below it. A namespace holds no '/', so the data-key is unique. */
function valueCell(row: KvRow, namespace: string): Child {
  const text = JSON.stringify(row.value) ?? 'null'
  const preview = text.length > PREVIEW_CHARS ? text.slice(0, PREVIEW_CHARS) + '…' : text
  return h('details', { 'data-key': 'kv-value-' + namespace + '/' + row.key }, h('summary', {}, h('code', {}, preview)),
    h('pre', { class: 'payload' }, JSON.stringify(row.value, null, 2)))
}

async function keysView(namespace: string, after: string | null): Promise<Child[]> {
  const body = { namespace, limit: PAGE, includeExpired: true, ...(after !== null ? { after } : {}) }
  const page = await api<KvPage>('/api/v1/resources/kv/list', { method: 'POST', body })
  const list = table<KvRow>([
    { label: 'Key', cell: (r) => h('code', {}, r.key) },
    { label: 'Value', cell: (r) => valueCell(r, namespace) },
    { label: 'Version', num: true, cell: (r) => num(r.version) },
    { label: 'Expires', cell: (r) => (r.expiresAt === null ? 'never' : time(r.expiresAt)) },
    { label: 'State', cell: (r) => (r.expired ? h('span', { class: 'badge stale' }, 'expired') : 'live') },
    { label: 'Updated', cell: (r) => time(r.updatedAt) },
  ], page.rows, after === null ? 'This namespace has no keys.' : 'No keys after ' + after + '.', (r) => ({ 'data-testid': 'kv-row-' + r.key }))
  list.setAttribute('data-testid', 'kv-keys')
  return [
    h('h2', {}, 'Keys of ', namespace),
    h('p', { class: 'muted' }, 'In key order, ' + PAGE + ' a page. Expired keys are never served by the API; those the sweep has not removed yet are shown here labelled.'),
    list,
    h('p', { class: 'pager' },
      after !== null ? link(pagePath(namespace), 'First page') : '',
      after !== null && page.nextAfter !== null ? ' · ' : '',
      page.nextAfter !== null ? h('a', { href: pagePath(namespace, page.nextAfter), 'data-nav': true, 'data-testid': 'kv-next' }, 'Next page') : ''),
  ]
}

export async function kvView(params: URLSearchParams): Promise<Child[]> {
  const chosen = params.get('namespace')
  const [{ namespaces }, keys] = await Promise.all([
    api<{ namespaces: Namespace[] }>('/api/v1/resources/kv/namespaces'),
    chosen !== null ? keysView(chosen, params.get('after')) : Promise.resolve(null),
  ])
  const list = table<Namespace>([
    { label: 'Namespace', cell: (n) => (n.namespace === chosen ? h('strong', {}, n.namespace) : link(pagePath(n.namespace), n.namespace)) },
    { label: 'Keys', num: true, cell: (n) => num(n.keys) },
  ], namespaces, 'No keys stored: a put through POST /api/v1/kv creates a namespace.', (n) => ({ 'data-testid': 'kv-ns-' + n.namespace }))
  list.setAttribute('data-testid', 'kv-namespaces')
  return [
    h('h1', {}, 'Key/value store'),
    h('p', { class: 'muted' }, 'Read-only. Key counts include expired keys not swept yet.'),
    list,
    keys ?? '',
  ]
}
