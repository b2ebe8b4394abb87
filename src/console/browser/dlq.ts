// Dead-lettered messages, GET /api/v1/dlq, newest failure first, with each payload shown on demand
// (the route has already decrypted encrypted ones), and for a session that may write a Retry
// button per row (actions.ts).
import { capabilities, retryButton } from './actions.js'
import { api, seg } from './api.js'
import { h, link, num, table, time, type Child, type Navigate } from './dom.js'
import type { MessageKey } from './messages.js'

const PAGE = 50

/** One message dead-lettered for one consumer group (queue mode included). */
export interface DeadLetter extends MessageKey {
  id: string
  consumerGroup: string
  offset: number
  failedAt: string
  retryCount: number
  errorMessage: string | null
  data: unknown
}

/** GET /api/v1/dlq: a page of dead letters and how many there are in all. */
export interface DeadLetters {
  messages: DeadLetter[]
  total: number
}

export async function dlqView(params: URLSearchParams, navigate: Navigate): Promise<Child[]> {
  const queue = params.get('queue')
  const query = '/api/v1/dlq?limit=' + PAGE + (queue !== null ? '&queue=' + seg(queue) : '')
  const [{ messages, total }, caps] = await Promise.all([api<DeadLetters>(query), capabilities()])
  const list = table<DeadLetter>([
    { label: 'Failed', cell: (m) => time(m.failedAt) },
    { label: 'Queue', cell: (m) => link('/console/queues/' + seg(m.queue), m.queue) },
    { label: 'Partition', cell: (m) => m.partition },
    { label: 'Group', cell: (m) => m.consumerGroup },
    { label: 'Retries', num: true, cell: (m) => num(m.retryCount) },
    { label: 'Error', cell: (m) => m.errorMessage || '–' },
    { label: 'Message', cell: (m) => link('/console/messages/' + seg(m.partitionId) + '/' + seg(m.transactionId), 'open') },
    { label: 'Payload', cell: (m) => h('details', { 'data-key': 'dlq-payload-' + m.id + '-' + m.consumerGroup }, h('summary', {}, 'view'),
        h('pre', { class: 'payload' }, JSON.stringify(m.data, null, 2)),
        h('p', { class: 'muted' }, 'id ' + m.id + ', offset ' + m.offset + ', transaction ' + m.transactionId)) },
    ...(caps.write ? [{ label: 'Action', cell: (m: DeadLetter) => retryButton(m, navigate) }] : []),
  ], messages, 'The dead-letter queue is empty.')
  list.setAttribute('data-testid', 'dlq')
  return [
    h('h1', {}, 'Dead letters', queue !== null ? ' of ' + queue : ''),
    h('p', { class: 'muted' }, num(total) + ' in total' + (total > PAGE ? ', the newest ' + PAGE + ' shown' : '') + '.',
      queue !== null ? [' ', link('/console/dlq', 'All queues')] : ''),
    list,
  ]
}
