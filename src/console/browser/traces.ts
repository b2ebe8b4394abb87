// Message traces. The trace names in use (GET /api/v1/traces/names) and, for one name, every event
// carrying it with its message (GET /api/v1/traces/by-name/:name) in the route's order, each linked
// to the message it was recorded against.
import { QUEUE_MODE } from '../../names.js'
import { api, seg } from './api.js'
import { h, link, num, rowLink, table, time, type Child } from './dom.js'
import { payloadBlock } from './messages.js'

const PAGE = 200

/** One recorded event, snake_case as Queen's clients read it. */
export interface Trace {
  id: string
  created_at: string
  event_type: string
  consumer_group: string
  worker_id: string | null
  trace_names: string[] | null
  data: unknown
}

/** An event found by trace name, with the message it was recorded against (gone with its queue: null names). */
interface NamedTrace extends Trace {
  partition_id: string
  transaction_id: string
  queue_name: string | null
  partition_name: string | null
  message_payload: unknown
}

interface TraceName {
  trace_name: string
  trace_count: number
  message_count: number
  last_seen: string
}

export async function traceNamesView(): Promise<Child[]> {
  const { trace_names: names, total } = await api<{ trace_names: TraceName[]; total: number }>('/api/v1/traces/names?limit=' + PAGE)
  const list = table<TraceName>([
    { label: 'Trace name', cell: (t) => link('/console/traces/' + seg(t.trace_name), t.trace_name) },
    { label: 'Events', num: true, cell: (t) => num(t.trace_count) },
    { label: 'Messages', num: true, cell: (t) => num(t.message_count) },
    { label: 'Last seen', cell: (t) => time(t.last_seen) },
  ], names, 'No traces recorded yet: consumers record them with POST /api/v1/traces.', (t) => rowLink('/console/traces/' + seg(t.trace_name)))
  list.setAttribute('data-testid', 'trace-names')
  return [h('h1', {}, 'Traces'), h('p', { class: 'muted' }, num(total) + ' trace names' + (total > PAGE ? ', the first ' + PAGE + ' shown' : '') + '.'), list]
}

export async function traceView(name: string): Promise<Child[]> {
  const { traces, total } = await api<{ traces: NamedTrace[]; total: number }>('/api/v1/traces/by-name/' + seg(name) + '?limit=' + PAGE)
  const href = (t: NamedTrace) => '/console/messages/' + seg(t.partition_id) + '/' + seg(t.transaction_id)
  const list = table<NamedTrace>([
    { label: 'When', cell: (t) => time(t.created_at) },
    { label: 'Event', cell: (t) => t.event_type },
    { label: 'Queue / partition', cell: (t) => [t.queue_name || '(deleted)', ' / ', t.partition_name || '–'] },
    { label: 'Message', cell: (t) => h('a', { href: href(t), 'data-nav': true }, h('code', {}, t.transaction_id)) },
    { label: 'Group', cell: (t) => (t.consumer_group === QUEUE_MODE ? 'queue mode' : t.consumer_group) },
    { label: 'Data', cell: (t) => payloadBlock(t.data) },
    { label: 'Message payload', cell: (t) => h('details', { 'data-key': 'trace-payload-' + t.id }, h('summary', {}, 'view'), payloadBlock(t.message_payload)) },
  ], traces, 'No event carries this trace name.')
  list.setAttribute('data-testid', 'trace-events')
  return [h('h1', {}, 'Trace ', h('code', {}, name)), h('p', { class: 'muted' }, num(total) + ' events' + (total > PAGE ? ', the newest ' + PAGE + ' shown' : '') + '. ', link('/console/traces', 'All trace names')), list]
}
