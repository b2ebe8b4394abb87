// The tenant's stream queries (GET /streams/v1/queries): source and sink queues, state size,
// shards, and the lag of the source group streams.<name> the SDK pops with.
import { api, seg } from './api.js'
import { bytes, h, link, num, table, time, type Child } from './dom.js'

/** One registered query, snake_case as the streams SDKs read it. */
interface StreamQuery {
  name: string
  source_queue: string
  sink_queue: string | null
  source_group: string
  state_rows: number
  state_bytes: number
  partitions: number
  lag: number
  updated_at: string
}

export async function streamsView(): Promise<Child[]> {
  const { queries } = await api<{ queries: StreamQuery[] }>('/streams/v1/queries')
  const list = table<StreamQuery>([
    { label: 'Query', cell: (q) => q.name },
    { label: 'Source', cell: (q) => link('/console/queues/' + seg(q.source_queue), q.source_queue) },
    { label: 'Sink', cell: (q) => (q.sink_queue ? link('/console/queues/' + seg(q.sink_queue), q.sink_queue) : '–') },
    { label: 'State rows', num: true, cell: (q) => num(q.state_rows) },
    { label: 'State size', num: true, cell: (q) => bytes(q.state_bytes) },
    { label: 'Partitions', num: true, cell: (q) => num(q.partitions) },
    { label: 'Source lag', num: true, cell: (q) => link('/console/groups/' + seg(q.source_group), num(q.lag)) },
    { label: 'Updated', cell: (q) => time(q.updated_at) },
  ], queries, 'No stream queries yet.')
  list.setAttribute('data-testid', 'streams')
  return [h('h1', {}, 'Streams'), list,
    h('p', { class: 'muted' }, 'Queries registered by Queen streams SDKs. State is kept per source partition; the lag is the source group streams.<query> still owes.')]
}
