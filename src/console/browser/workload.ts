// Who does the work: GET /api/v1/analytics/workload per namespace, task or queue over the last
// hour, a line of messages pushed per bucket for the whole tenant, and per group its totals for
// the window beside its current backlog, dead letters and footprint. Figures the broker does not
// measure come back null and are shown as "–". A group of namespaces or tasks drills down to its
// queues.
import { api, seg } from './api.js'
import { lineChart } from './chart.js'
import { bytes, h, link, num, table, type Child } from './dom.js'

const GROUPINGS = ['namespace', 'task', 'queue'] as const
type Grouping = (typeof GROUPINGS)[number]

interface Block {
  queues: number
  window: { pushMessages: number; settledMessages: number; deadLettered: number; maxLagMs: number | null }
  series: { push: (number | null)[]; settled: (number | null)[] }
  now: { pending: number; processing: number; deadLetter: number; retainedBytes: number; partitions: number; groups: number; queuesWithoutGroup: number }
}

interface Workload {
  bucketMinutes: number
  buckets: string[]
  rows: (Block & { key: string })[]
  tenant: Block
}

const share = (part: number, whole: number) => (whole > 0 ? Math.round((part / whole) * 100) + ' %' : '–')

export async function workloadView(params: URLSearchParams): Promise<Child[]> {
  const asked = params.get('groupBy')
  const groupBy: Grouping = (GROUPINGS as readonly string[]).includes(asked ?? '') ? (asked as Grouping) : 'namespace'
  const filter = params.get('namespace') !== null ? '&namespace=' + seg(params.get('namespace')!) : params.get('task') !== null ? '&task=' + seg(params.get('task')!) : ''
  const w = await api<Workload>('/api/v1/analytics/workload?groupBy=' + groupBy + filter)
  const drill = (key: string) =>
    groupBy === 'queue' ? link('/console/queues/' + seg(key), key) : link('/console/workload?groupBy=queue&' + groupBy + '=' + seg(key), key || '(none)')
  const rows = table<Workload['rows'][number]>([
    { label: groupBy.charAt(0).toUpperCase() + groupBy.slice(1), cell: (r) => drill(r.key) },
    { label: 'Queues', num: true, cell: (r) => num(r.queues) },
    { label: 'Pushed', num: true, cell: (r) => num(r.window.pushMessages) },
    { label: 'Share', num: true, cell: (r) => share(r.window.pushMessages, w.tenant.window.pushMessages) },
    { label: 'Settled', num: true, cell: (r) => num(r.window.settledMessages) },
    { label: 'Dead-lettered', num: true, cell: (r) => num(r.window.deadLettered) },
    { label: 'Pending now', num: true, cell: (r) => num(r.now.pending) },
    { label: 'Dead letters now', num: true, cell: (r) => num(r.now.deadLetter) },
    { label: 'Partitions', num: true, cell: (r) => num(r.now.partitions) },
    { label: 'Groups', num: true, cell: (r) => num(r.now.groups) },
    { label: 'Unread queues', num: true, cell: (r) => num(r.now.queuesWithoutGroup) },
    { label: 'Retained', num: true, cell: (r) => bytes(r.now.retainedBytes) },
  ], w.rows, 'No queues.', (r) => ({ 'data-testid': 'workload-' + r.key }))
  rows.setAttribute('data-testid', 'workload')
  return [
    h('h1', {}, 'Workload'),
    h('p', { class: 'muted' }, 'The last hour in ' + w.bucketMinutes + '-minute buckets, by ',
      ...GROUPINGS.flatMap((g, i) => [i > 0 ? ', ' : '', g === groupBy && filter === '' ? h('strong', {}, g) : link('/console/workload?groupBy=' + g, g)]), '.'),
    lineChart('Messages pushed, whole tenant', w.buckets, [{ label: 'pushed', cls: 'ingested', values: w.tenant.series.push }]),
    rows,
  ]
}
