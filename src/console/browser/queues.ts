// The list view, GET /api/v1/resources/queues. partitions and total are live; pending, processing
// and retained bytes are the reconciler's, hence the statsAge badge.
import { api, loadSettings, seg } from './api.js'
import { hourCharts } from './chart.js'
import { bytes, h, link, num, statsBadge, table, type Child } from './dom.js'

/** One queue of GET /api/v1/resources/queues. */
interface QueueSummary {
  name: string
  namespace: string | null
  task: string | null
  partitions: number
  messages: { pending: number; processing: number; total: number }
  retainedBytes: number
}

/** GET /api/v1/resources/queues: statsAge is the age of the oldest cached figure, -1 when none was reconciled. */
export interface QueueListing {
  queues: QueueSummary[]
  statsAge: number
}

export async function queuesView(): Promise<Child[]> {
  const settings = await loadSettings()
  const { queues, statsAge } = await api<QueueListing>('/api/v1/resources/queues')
  const list = table<QueueSummary>([
    { label: 'Queue', cell: (q) => link('/console/queues/' + seg(q.name), q.name === '' ? '(empty name)' : q.name) },
    { label: 'Namespace / task', cell: (q) => [q.namespace, q.task].filter(Boolean).join(' / ') || '–' },
    { label: 'Partitions', num: true, cell: (q) => num(q.partitions) },
    { label: 'Pending', num: true, cell: (q) => num(q.messages.pending) },
    { label: 'Processing', num: true, cell: (q) => num(q.messages.processing) },
    { label: 'Retained', num: true, cell: (q) => num(q.messages.total) },
    { label: 'Retained bytes', num: true, cell: (q) => bytes(q.retainedBytes) },
  ], queues, 'No queues yet: push to one and it appears here.')
  list.setAttribute('data-testid', 'queue-list')
  return [
    h('div', { class: 'title' }, h('h1', {}, 'Queues'), statsBadge(statsAge, settings.staleAfterSeconds)),
    list,
    h('p', { class: 'muted' }, 'Pending and processing are the stats reconciler\'s figures, retained bytes the retained-bytes lane\'s (0 until its first pass); partitions and retained counts are live.'),
    await hourCharts(undefined),
  ]
}
