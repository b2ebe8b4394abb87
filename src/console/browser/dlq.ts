// Dead-lettered messages, GET /api/v1/dlq, newest failure first, with each payload shown on demand
// (the route has already decrypted encrypted ones); for a session that may write a Replay button
// per row, and for an admin looking at one queue a Purge button (actions.ts). The commonest error
// shapes of that queue (GET /api/v1/analytics/dlq-signatures) head the list.
import { capabilities, purgeButton, replayButton } from './actions.js'
import { api, seg } from './api.js'
import { h, link, num, table, time, type Child, type Navigate } from './dom.js'
import type { MessageKey } from './messages.js'

const PAGE = 50

/** One message dead-lettered for one consumer group (queue mode included). */
export interface DeadLetter extends MessageKey {
  /** The dead-letter row's id, which the replay route takes. */
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

/** GET /api/v1/analytics/dlq-signatures: the error shapes of a queue's newest dead letters. */
interface Signatures {
  sample: number
  signatures: { text: string; n: number; share: number }[]
}

export async function dlqView(params: URLSearchParams, navigate: Navigate): Promise<Child[]> {
  const queue = params.get('queue')
  const query = '/api/v1/dlq?limit=' + PAGE + (queue !== null ? '&queue=' + seg(queue) : '')
  const [{ messages, total }, caps, shapes] = await Promise.all([
    api<DeadLetters>(query),
    capabilities(),
    queue !== null ? api<Signatures>('/api/v1/analytics/dlq-signatures?queue=' + seg(queue)) : Promise.resolve(null),
  ])
  const signatures = shapes && shapes.signatures.length > 0
    ? table<Signatures['signatures'][number]>([
        { label: 'Error shape', cell: (s) => s.text || '(no error text)' },
        { label: 'Dead letters', num: true, cell: (s) => num(s.n) },
        { label: 'Share', num: true, cell: (s) => Math.round(s.share * 100) + ' %' },
      ], shapes.signatures, '')
    : null
  signatures?.setAttribute('data-testid', 'dlq-signatures')
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
    ...(caps.write ? [{ label: 'Action', cell: (m: DeadLetter) => replayButton(m, navigate) }] : []),
  ], messages, 'The dead-letter queue is empty.')
  list.setAttribute('data-testid', 'dlq')
  return [
    h('h1', {}, 'Dead letters', queue !== null ? ' of ' + queue : ''),
    h('p', { class: 'muted' }, num(total) + ' in total' + (total > PAGE ? ', the newest ' + PAGE + ' shown' : '') + '.',
      queue !== null ? [' ', link('/console/dlq', 'All queues')] : ''),
    queue !== null && caps.admin && total > 0 ? h('p', {}, purgeButton(queue, total, navigate)) : '',
    signatures ? [h('h2', {}, 'Why, in the newest ' + num(shapes!.sample)), signatures] : '',
    list,
  ]
}
