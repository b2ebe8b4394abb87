// Browser module dlq.js: dead-lettered messages, GET /api/v1/dlq, newest failure first, with each
// payload shown on demand (the route has already decrypted encrypted ones).
export const DLQ_JS = String.raw`
import { api, seg } from './api.js'
import { h, link, num, table, time } from './dom.js'

const PAGE = 50

export async function dlqView(params) {
  const queue = params.get('queue')
  const query = '/api/v1/dlq?limit=' + PAGE + (queue !== null ? '&queue=' + seg(queue) : '')
  const { messages, total } = await api(query)
  const list = table([
    { label: 'Failed', cell: (m) => time(m.failedAt) },
    { label: 'Queue', cell: (m) => link('/console/queues/' + seg(m.queue), m.queue) },
    { label: 'Partition', cell: (m) => m.partition },
    { label: 'Group', cell: (m) => m.consumerGroup },
    { label: 'Retries', num: true, cell: (m) => num(m.retryCount) },
    { label: 'Error', cell: (m) => m.errorMessage || '–' },
    { label: 'Payload', cell: (m) => h('details', {}, h('summary', {}, 'view'),
        h('pre', { class: 'payload' }, JSON.stringify(m.data, null, 2)),
        h('p', { class: 'muted' }, 'id ' + m.id + ', offset ' + m.offset + ', transaction ' + m.transactionId)) },
  ], messages, 'The dead-letter queue is empty.')
  list.setAttribute('data-testid', 'dlq')
  return [
    h('h1', {}, 'Dead letters', queue !== null ? ' of ' + queue : ''),
    h('p', { class: 'muted' }, num(total) + ' in total' + (total > PAGE ? ', the newest ' + PAGE + ' shown' : '') + '.',
      queue !== null ? [' ', link('/console/dlq', 'All queues')] : ''),
    list,
  ]
}
`
