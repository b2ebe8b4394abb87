// The message browser. A partition's retained messages newest first, a page at a time (GET
// /api/v1/messages, no payloads), with each group's cursor beside them (GET
// /api/v1/consumer-groups/:group) so "consumed by" is the cursor compared with the offset; one
// message with its payload, its groups and its traces (GET /api/v1/messages/:pid/:txn,
// /api/v1/traces/:pid/:txn, /api/v1/dlq); and a search by transaction id over a queue's partitions.
import { QUEUE_MODE } from '../../names.js'
import { capabilities, moveToDlqButton, replayButton } from './actions.js'
import { api, seg, statusOf } from './api.js'
import type { DeadLetter, DeadLetters } from './dlq.js'
import { h, link, num, rowLink, table, time, type Child, type Navigate } from './dom.js'
import type { GroupDetail, GroupSummary } from './groups.js'
import type { Trace } from './traces.js'

const PAGE = 50
// The listing filters by creation time and defaults to the last hour; the browser wants all that is retained.
const EPOCH = '1970-01-01T00:00:00.000Z'
const STATUSES = ['pending', 'processing', 'completed', 'dead_letter'] as const
type Status = (typeof STATUSES)[number]

/** What names one message: (partition, transaction id), with the names an operator reads. */
export interface MessageKey {
  partitionId: string
  transactionId: string
  queue: string
  partition: string
}

/** A message as the listings show it, without its payload. */
export interface ListedMessage extends MessageKey {
  offset: number
  createdAt: string
  status: Status
  traceId: string | null
}

/** GET /api/v1/messages/:partitionId/:transactionId: one message with its (decrypted) payload. */
interface MessageDetail extends ListedMessage {
  retryCount: number
  errorMessage: string | null
  isEncrypted: boolean
  payload: unknown
}

/** One consumer group's cursor on one partition; cursor is the next offset it will read, null before its first read. */
interface CursorRow {
  group: string
  subscriptionMode: string | null
  cursor: number | null
  lag: number | null
  leaseActive: boolean
}

const messageHref = (m: MessageKey) => '/console/messages/' + seg(m.partitionId) + '/' + seg(m.transactionId)
const groupName = (g: string) => (g === QUEUE_MODE ? 'queue mode' : g)
const isStatus = (s: string | null): s is Status => STATUSES.includes(s as Status)

/** Formatted JSON for a payload, in a scrollable block; a string payload is shown as it is. */
export function payloadBlock(data: unknown, testid?: string): HTMLPreElement {
  return h('pre', { class: 'payload', 'data-testid': testid }, typeof data === 'string' ? data : JSON.stringify(data, null, 2))
}

/** Each group on the queue with its cursor on one partition: committedOffset is the next offset it will read. */
async function cursorsOn(queue: string, partition: string): Promise<CursorRow[]> {
  const groups = (await api<GroupSummary[]>('/api/v1/consumer-groups')).filter((g) => g.queueName === queue)
  const details = await Promise.all(groups.map((g) => api<GroupDetail>('/api/v1/consumer-groups/' + seg(g.name))))
  return groups.map((g, i) => {
    const p = (details[i]?.[queue]?.partitions || []).find((x) => x.partition === partition)
    return { group: g.name, subscriptionMode: g.subscriptionMode, cursor: p ? p.committedOffset : null, lag: p ? p.offsetLag : null, leaseActive: p ? p.leaseActive : false }
  })
}

function searchForm(queue: string, navigate: Navigate): HTMLFormElement {
  const input = h('input', { type: 'text', name: 'transactionId', placeholder: 'transaction id', 'data-key': 'find-txn', 'data-testid': 'find-txn', size: 40, 'aria-label': 'Transaction id' })
  const form = h('form', { method: 'post', class: 'inline-form', role: 'search' }, input, h('button', { type: 'submit' }, 'Find message'))
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    if (input.value.trim()) navigate('/console/queues/' + seg(queue) + '/find?transactionId=' + seg(input.value.trim()))
  })
  return form
}

export async function partitionView(queue: string, partition: string, params: URLSearchParams, navigate: Navigate): Promise<Child[]> {
  const page = Math.max(0, Number.parseInt(params.get('page') || '0', 10) || 0)
  const asked = params.get('status')
  const status = isStatus(asked) ? asked : null
  const query = new URLSearchParams({ queue, partition, from: EPOCH, to: new Date(Date.now() + 60_000).toISOString(), limit: String(PAGE), offset: String(page * PAGE) })
  if (status) query.set('status', status)
  const [{ messages }, cursors, caps] = await Promise.all([api<{ messages: ListedMessage[] }>('/api/v1/messages?' + query), cursorsOn(queue, partition), capabilities()])
  const here = '/console/queues/' + seg(queue) + '/partitions/' + seg(partition)
  const at = (p: number, s: Status | null = status) => here + '?' + new URLSearchParams({ ...(p ? { page: String(p) } : {}), ...(s ? { status: s } : {}) })
  const consumedBy = (m: ListedMessage) => cursors.filter((c) => c.cursor !== null && c.cursor > m.offset).map((c) => groupName(c.group))
  const list = table<ListedMessage>([
    { label: 'Offset', num: true, cell: (m) => num(m.offset) },
    { label: 'Created', cell: (m) => time(m.createdAt) },
    { label: 'Transaction', cell: (m) => h('a', { href: messageHref(m), 'data-nav': true }, h('code', {}, m.transactionId)) },
    { label: 'Trace', cell: (m) => (m.traceId ? h('code', { class: 'short', title: m.traceId }, m.traceId.slice(0, 8) + '…') : '–') },
    { label: 'Status', cell: (m) => h('span', { class: 'status-' + m.status }, m.status) },
    { label: 'Consumed by', cell: (m) => {
      const by = consumedBy(m)
      return by.length ? by.join(', ') : h('span', { class: 'muted' }, 'no group yet')
    } },
    ...(caps.write ? [{ label: 'Action', cell: (m: ListedMessage) => (m.status === 'dead_letter' ? '–' : moveToDlqButton(m, navigate)) }] : []),
  ], messages, page ? 'No messages on this page.' : 'No retained messages in this partition.', (m) => ({ ...rowLink(messageHref(m)), 'data-offset': m.offset }))
  list.setAttribute('data-testid', 'partition-messages')
  const offsets = messages.map((m) => m.offset)
  const range = offsets.length ? 'offsets ' + num(Math.max(...offsets)) + ' down to ' + num(Math.min(...offsets)) : 'no offsets'
  const cursorTable = table<CursorRow>([
    { label: 'Consumer group', cell: (c) => (c.group === QUEUE_MODE ? 'queue mode' : link('/console/groups/' + seg(c.group), c.group)) },
    { label: 'Subscription', cell: (c) => c.subscriptionMode || '–' },
    { label: 'Next offset to read', num: true, cell: (c) => (c.cursor === null ? 'not started' : num(c.cursor)) },
    { label: 'Lag', num: true, cell: (c) => num(c.lag) },
    { label: 'Leased', cell: (c) => (c.leaseActive ? 'yes' : 'no') },
  ], cursors, 'No consumer group reads this queue yet.')
  cursorTable.setAttribute('data-testid', 'partition-cursors')
  return [
    h('div', { class: 'title' },
      h('h1', {}, 'Messages of ', link('/console/queues/' + seg(queue), queue), ' / ', partition),
      searchForm(queue, navigate)),
    h('h2', {}, 'Cursors on this partition'), cursorTable,
    h('h2', {}, 'Newest first, ', h('span', { 'data-testid': 'offset-range' }, range)),
    h('p', { class: 'pager' },
      'Status: ', [null, ...STATUSES].map((s) => (s === status ? h('strong', {}, s || 'all') : link(at(0, s), s || 'all'))).flatMap((x) => [x, ' ']),
      ' · ', page > 0 ? link(at(page - 1), '← Newer') : h('span', { class: 'muted' }, '← Newer'), ' ',
      messages.length === PAGE ? link(at(page + 1), 'Older →') : h('span', { class: 'muted' }, 'Older →')),
    list,
    h('p', { class: 'muted' }, 'A group has consumed a message when its cursor (the next offset it will read) is past the message\'s offset. Rows open with Enter or a click.'),
  ]
}

/** Search by transaction id: the key is (partition, transaction id), so every partition of the queue is asked. */
export async function findView(queue: string, params: URLSearchParams, navigate: Navigate): Promise<Child[]> {
  const txn = (params.get('transactionId') || '').trim()
  const { partitions } = await api<{ partitions: { id: string }[] }>('/api/v1/resources/partitions?limit=1000&queue=' + seg(queue))
  const found = txn === '' ? [] : (await Promise.all(partitions.map((p) =>
    api<ListedMessage>('/api/v1/messages/' + seg(p.id) + '/' + seg(txn)).catch((error: unknown) => {
      if (statusOf(error) === 404) return null
      throw error
    })))).filter((m) => m !== null)
  const list = table<ListedMessage>([
    { label: 'Partition', cell: (m) => link('/console/queues/' + seg(queue) + '/partitions/' + seg(m.partition), m.partition) },
    { label: 'Offset', num: true, cell: (m) => num(m.offset) },
    { label: 'Status', cell: (m) => m.status },
    { label: 'Transaction', cell: (m) => h('a', { href: messageHref(m), 'data-nav': true }, h('code', {}, m.transactionId)) },
  ], found, 'No retained message of ' + queue + ' has transaction id "' + txn + '" (' + partitions.length + ' partitions searched).', (m) => rowLink(messageHref(m)))
  list.setAttribute('data-testid', 'found')
  return [h('div', { class: 'title' }, h('h1', {}, 'Find in ', link('/console/queues/' + seg(queue), queue)), searchForm(queue, navigate)), list]
}

export async function messageView(partitionId: string, transactionId: string, navigate: Navigate): Promise<Child[]> {
  const key = seg(partitionId) + '/' + seg(transactionId)
  const [m, { traces }, caps] = await Promise.all([api<MessageDetail>('/api/v1/messages/' + key), api<{ traces: Trace[] }>('/api/v1/traces/' + key), capabilities()])
  const [dead, cursors] = await Promise.all([
    api<DeadLetters>('/api/v1/dlq?limit=1000&queue=' + seg(m.queue) + '&partition=' + seg(m.partition)),
    cursorsOn(m.queue, m.partition),
  ])
  const letters = dead.messages.filter((d) => d.transactionId === m.transactionId)
  type GroupRow = CursorRow & { consumed: boolean; letter: DeadLetter | undefined }
  const rows: GroupRow[] = cursors.map((c) => ({ ...c, consumed: c.cursor !== null && c.cursor > m.offset, letter: letters.find((d) => d.consumerGroup === c.group) }))
  const groups = table<GroupRow>([
    { label: 'Consumer group', cell: (r) => (r.group === QUEUE_MODE ? 'queue mode' : link('/console/groups/' + seg(r.group), r.group)) },
    { label: 'Next offset to read', num: true, cell: (r) => (r.cursor === null ? 'not started' : num(r.cursor)) },
    { label: 'Consumed', cell: (r) => (r.consumed ? 'yes' : h('strong', { class: 'warn' }, 'not yet')) },
    { label: 'Dead letter', cell: (r) => (r.letter ? [time(r.letter.failedAt), ' ', r.letter.errorMessage || ''] : '–') },
    ...(caps.write ? [{ label: 'Action', cell: (r: GroupRow) => (r.letter ? replayButton(r.letter, navigate) : '–') }] : []),
  ], rows, 'No consumer group reads this queue yet.')
  groups.setAttribute('data-testid', 'message-groups')
  const traceTable = table<Trace>([
    { label: 'When', cell: (t) => time(t.created_at) },
    { label: 'Event', cell: (t) => t.event_type },
    { label: 'Group', cell: (t) => groupName(t.consumer_group) },
    { label: 'Worker', cell: (t) => t.worker_id || '–' },
    { label: 'Trace names', cell: (t) => (t.trace_names || []).map((n) => link('/console/traces/' + seg(n), n)).flatMap((x) => [x, ' ']) },
    { label: 'Data', cell: (t) => payloadBlock(t.data) },
  ], traces, 'No trace recorded for this message.')
  traceTable.setAttribute('data-testid', 'message-traces')
  return [
    h('div', { class: 'title' },
      h('h1', {}, 'Message ', h('code', { 'data-testid': 'message-txn' }, m.transactionId)),
      h('span', { class: 'actions' },
        link('/console/queues/' + seg(m.queue) + '/partitions/' + seg(m.partition), 'Partition ' + m.partition),
        caps.write && m.status !== 'dead_letter' ? moveToDlqButton({ ...m }, navigate) : null)),
    h('dl', { class: 'facts', 'data-testid': 'message-facts' },
      h('dt', {}, 'Queue / partition'), h('dd', {}, link('/console/queues/' + seg(m.queue), m.queue), ' / ', m.partition),
      h('dt', {}, 'Offset'), h('dd', {}, num(m.offset)),
      h('dt', {}, 'Status'), h('dd', {}, m.status),
      h('dt', {}, 'Created'), h('dd', {}, time(m.createdAt)),
      h('dt', {}, 'Transaction id'), h('dd', {}, h('code', {}, m.transactionId)),
      h('dt', {}, 'Trace id'), h('dd', { 'data-testid': 'message-trace-id' }, m.traceId ? h('code', {}, m.traceId) : '–'),
      h('dt', {}, 'Retries'), h('dd', {}, num(m.retryCount)),
      h('dt', {}, 'Last error'), h('dd', {}, m.errorMessage || '–'),
      h('dt', {}, 'Encrypted'), h('dd', {}, m.isEncrypted ? 'yes (shown decrypted)' : 'no')),
    h('h2', {}, 'Payload'), payloadBlock(m.payload, 'payload'),
    h('h2', {}, 'Consumer groups'), groups,
    h('h2', {}, 'Traces'), traceTable,
  ]
}
