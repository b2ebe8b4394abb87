// One queue. Options and partitions from GET /api/v1/resources/queues/:q (live), depth per
// consumer group from .../depth?group= (live), groups from GET /api/v1/consumer-groups, the newest
// messages from GET /api/v1/status/queues/:q/messages, and the hour chart. Actions (actions.ts) as
// the session's roles allow: move to DLQ (read-write), clear a partition or the queue and delete
// the queue (admin).
import { QUEUE_MODE } from '../../names.js'
import { capabilities, clearPartitionButton, clearQueueButton, deleteQueueButton, moveToDlqButton } from './actions.js'
import { api, seg } from './api.js'
import { hourCharts } from './chart.js'
import { bytes, h, link, num, orderedOptions, rowLink, table, time, type Child, type Navigate } from './dom.js'
import type { GroupSummary } from './groups.js'
import type { ListedMessage } from './messages.js'

const RECENT = 20

/** An option as stored: the configure documentation names each one's type. */
export type OptionValue = string | number | boolean | null

interface MessageCounts {
  total: number
  pending: number
  processing: number
  completed: number
  deadLetter: number
}

/** GET /api/v1/resources/queues/:queue: identity, all options, partitions and totals. */
export interface QueueDetail {
  name: string
  namespace: string | null
  task: string | null
  createdAt: string
  options: Record<string, OptionValue>
  partitions: { name: string; stats: MessageCounts; oldestMessage: string | null; newestMessage: string | null }[]
  totals: MessageCounts
  segments: { segments: number }
  retainedBytes: number
}

/** GET /api/v1/resources/queues/:queue/depth[?group=]: log depth and work depth of one consumer. */
interface Depth {
  conflation: boolean
  pending: number
  effectivePending: number
  processing: number
  effectiveReady: number
  partitionsPending: number
}

/**
 * The queue's depth without a group (the worst cursor of all its consumers: what the listing and
 * the metering figures show), then each consumer's own, queue mode included when it has popped.
 */
async function groupDepths(name: string): Promise<{ label: string; depth: Depth }[]> {
  const groups = (await api<GroupSummary[]>('/api/v1/consumer-groups')).filter((g) => g.queueName === name)
  const base = '/api/v1/resources/queues/' + seg(name) + '/depth'
  const [worst, ...own] = await Promise.all([api<Depth>(base), ...groups.map((g) => api<Depth>(base + '?group=' + seg(g.name)))])
  return [
    { label: 'all consumers (worst cursor)', depth: worst },
    ...groups.map((g, i) => ({ label: g.name === QUEUE_MODE ? 'queue mode' : g.name, depth: own[i]! })),
  ]
}

function optionValue(v: OptionValue): string {
  if (typeof v === 'boolean') return v ? 'true' : 'false'
  if (v === '') return '""'
  return String(v)
}

export async function queueView(name: string, navigate: Navigate): Promise<Child[]> {
  const path = '/api/v1/resources/queues/' + seg(name)
  const [q, depths, recent, caps] = await Promise.all([api<QueueDetail>(path), groupDepths(name),
    api<ListedMessage[]>('/api/v1/status/queues/' + seg(name) + '/messages?limit=' + RECENT), capabilities()])
  const admin = caps.admin
  const partitionHref = (p: string) => '/console/queues/' + seg(name) + '/partitions/' + seg(p)
  const messageHref = (m: ListedMessage) => '/console/messages/' + seg(m.partitionId) + '/' + seg(m.transactionId)
  const options = table<[string, OptionValue]>([
    { label: 'Option', cell: ([k]) => h('code', {}, k) },
    { label: 'Value', cell: ([k, v]) => h('span', { 'data-option': k }, optionValue(v)) },
  ], orderedOptions(q.options))
  options.setAttribute('data-testid', 'options')
  options.classList.add('compact')
  type Partition = QueueDetail['partitions'][number]
  const partitions = table<Partition>([
    { label: 'Partition', cell: (p) => link(partitionHref(p.name), p.name) },
    { label: 'Total', num: true, cell: (p) => num(p.stats.total) },
    { label: 'Pending', num: true, cell: (p) => num(p.stats.pending) },
    { label: 'Processing', num: true, cell: (p) => num(p.stats.processing) },
    { label: 'Completed', num: true, cell: (p) => num(p.stats.completed) },
    { label: 'Dead-lettered', num: true, cell: (p) => num(p.stats.deadLetter) },
    { label: 'Oldest', cell: (p) => time(p.oldestMessage) },
    { label: 'Newest', cell: (p) => time(p.newestMessage) },
    ...(admin ? [{ label: 'Action', cell: (p: Partition) => clearPartitionButton(name, p.name, p.stats.total, navigate) }] : []),
  ], q.partitions, 'No partitions yet: the first push creates one.', (p) => rowLink(partitionHref(p.name)))
  partitions.setAttribute('data-testid', 'partitions')
  const messages = table<ListedMessage>([
    { label: 'Created', cell: (m) => time(m.createdAt) },
    { label: 'Partition', cell: (m) => m.partition },
    { label: 'Offset', num: true, cell: (m) => num(m.offset) },
    { label: 'Transaction', cell: (m) => h('a', { href: messageHref(m), 'data-nav': true }, h('code', {}, m.transactionId)) },
    { label: 'Status', cell: (m) => m.status },
    ...(caps.write ? [{ label: 'Action', cell: (m: ListedMessage) => (m.status === 'dead_letter' ? '–' : moveToDlqButton(m, navigate)) }] : []),
  ], recent, 'No retained messages.', (m) => rowLink(messageHref(m)))
  messages.setAttribute('data-testid', 'messages')
  // For a conflating group pending is log depth and effectivePending the handler calls left (work
  // depth); both are shown so a huge pending over a small work depth reads as healthy.
  const depth = table<{ label: string; depth: Depth }>([
    { label: 'Consumer group', cell: (r) => r.label },
    { label: 'Delivery', cell: (r) => (r.depth.conflation ? 'conflate' : 'every message') },
    { label: 'Pending (log depth)', num: true, cell: (r) => num(r.depth.pending) },
    { label: 'Work depth', num: true, cell: (r) => num(r.depth.effectivePending) },
    { label: 'Processing', num: true, cell: (r) => num(r.depth.processing) },
    { label: 'Ready', num: true, cell: (r) => num(r.depth.effectiveReady) },
    { label: 'Partitions pending', num: true, cell: (r) => num(r.depth.partitionsPending) },
  ], depths)
  depth.setAttribute('data-testid', 'depth')
  const t = q.totals
  return [
    h('div', { class: 'title' },
      h('h1', {}, 'Queue ', h('span', { 'data-testid': 'queue-name' }, q.name)),
      h('span', { class: 'actions' },
        link('/console/queues/' + seg(name) + '/edit', 'Edit options'),
        link('/console/dlq?queue=' + seg(name), 'Dead letters'),
        admin ? clearQueueButton(name, q.totals.total, navigate) : null,
        admin ? deleteQueueButton(name, q.totals.total, navigate) : null)),
    h('dl', { class: 'facts' },
      h('dt', {}, 'Namespace / task'), h('dd', {}, [q.namespace, q.task].filter(Boolean).join(' / ') || '–'),
      h('dt', {}, 'Created'), h('dd', {}, time(q.createdAt)),
      h('dt', {}, 'Pending / processing'), h('dd', {}, num(t.pending) + ' / ' + num(t.processing)),
      h('dt', {}, 'Retained'), h('dd', {}, num(t.total) + ' messages in ' + num(q.segments.segments) + ' segments, ', bytes(q.retainedBytes)),
      h('dt', {}, 'Dead-lettered'), h('dd', {}, num(t.deadLetter))),
    h('h2', {}, 'Depth per consumer group'), depth,
    h('h2', {}, 'Partitions'), partitions,
    h('h2', {}, 'Newest messages (all partitions; open a partition to browse it)'), messages,
    await hourCharts(name),
    h('h2', {}, 'Options (all 21)'), options,
  ]
}
