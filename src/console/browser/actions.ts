// The console's actions, each one public API call: clear a queue or a partition, delete a queue,
// replay a dead letter, purge a queue's dead letters, move a message to the DLQ, seek or delete a consumer group, maintenance on
// and off, refresh stats (docs/console.md lists each with its route and roles). A button is drawn
// only when the broker would accept its route from this session, and each asks for a confirmation
// that names what will change before it sends anything; the answer (or the refusal) is shown as the
// next page's flash line.
import { QUEUE_MODE } from '../../names.js'
import { api, messageOf, seg, session, statusOf } from './api.js'
import type { DeadLetter } from './dlq.js'
import { h, type Navigate } from './dom.js'
import type { MessageKey } from './messages.js'

// A group name no one uses: the write probe below is refused by validation before it could touch it.
const PROBE_GROUP = '__console_capability_probe__'

/** What this session's token may do, as the broker's routes judge it. */
export interface Capabilities {
  admin: boolean
  write: boolean
}

const capsBySession = new Map<string, Promise<Capabilities>>()

// 200 or 400 mean the route's role set admitted us (the guard runs before validation); 401/403 mean
// it did not. Anything else (a 503) decides nothing, so the answer is not remembered.
const admitted = (request: Promise<unknown>): Promise<boolean> => request.then(() => true, (error: unknown) => {
  const status = statusOf(error)
  if (status === 400) return true
  if (status === 401 || status === 403) return false
  throw error
})

/**
 * What this session may do. The console cannot read roles out of a token (the claim mapping is the
 * broker's), so it asks the broker with two requests that change nothing:
 * - admin: GET /api/v1/system/maintenance, an admin-only read;
 * - write: POST /api/v1/consumer-groups/<probe>/subscription with an empty body, a read-write
 *   route whose validation refuses {} with 400 after the role check, and writes nothing.
 * Any caller has both when authentication is off. Asked once per token and tenant.
 */
export function capabilities(): Promise<Capabilities> {
  const key = session.token() + '\u0000' + session.tenant()
  let asked = capsBySession.get(key)
  if (!asked) {
    asked = Promise.all([
      admitted(api('/api/v1/system/maintenance')),
      admitted(api('/api/v1/consumer-groups/' + PROBE_GROUP + '/subscription', { method: 'POST', body: {} })),
    ]).then(([admin, write]) => ({ admin, write: write || admin }), () => {
      capsBySession.delete(key)
      return { admin: false, write: false }
    })
    capsBySession.set(key, asked)
  }
  return asked
}

export const groupLabel = (group: string): string => (group === QUEUE_MODE ? 'queue mode' : 'consumer group "' + group + '"')

/** What an action reports: a status line for the view it was on, or a path to go to with one. */
export type Outcome = string | { to: string | null; message: string }

export interface ButtonOptions<A> {
  /** Drawn as a destructive action (the default). */
  danger?: boolean
  /** Runs before the confirmation; null cancels (a prompt for a seek time). Its answer is passed on. */
  ask?: (() => A | null) | null
}

/**
 * A button that runs action() once the operator confirms question, then reloads the view (or goes
 * to the path action() returns as { to, message }) with the outcome. ask(), when given, runs first
 * and may return null to cancel (a prompt for a seek time); its answer is passed on.
 */
export function actionButton<A = undefined>(label: string, testid: string, question: string | ((answer: A) => string),
  action: (answer: A) => Promise<Outcome>, navigate: Navigate, { danger = true, ask = null }: ButtonOptions<A> = {}): HTMLButtonElement {
  return h('button', { type: 'button', class: danger ? 'action danger' : 'action', 'data-action': testid, 'data-testid': testid, onclick: async () => {
    const asked = ask ? ask() : undefined
    if (ask && asked === null) return
    // Without ask() there is no answer: A is undefined for those buttons.
    const answer = asked as A
    if (!window.confirm(typeof question === 'function' ? question(answer) : question)) return
    let outcome: Outcome
    try {
      outcome = await action(answer)
    } catch (error) {
      const status = statusOf(error)
      outcome = 'Not done: ' + (status ? status + ' ' : '') + messageOf(error)
    }
    const { to, message } = typeof outcome === 'string' ? { to: null, message: outcome } : outcome
    navigate(to || location.pathname + location.search, message)
  } }, label)
}

interface Cleared {
  count: number
  queue: string
  partition?: string
}

export function clearQueueButton(queue: string, total: number, navigate: Navigate): HTMLButtonElement {
  return actionButton('Clear queue', 'clear-queue',
    'Clear queue "' + queue + '"? This removes all ' + total + ' retained messages of every partition. Offsets continue and consumer groups keep their positions; dead letters are kept.',
    async () => {
      const r = await api<Cleared>('/api/v1/queues/' + seg(queue) + '/clear', { method: 'DELETE' })
      return 'Cleared ' + r.count + ' messages from ' + r.queue + ' (all partitions).'
    }, navigate)
}

export function clearPartitionButton(queue: string, partition: string, total: number, navigate: Navigate): HTMLButtonElement {
  return actionButton('Clear', 'clear-partition-' + partition,
    'Clear partition "' + partition + '" of queue "' + queue + '"? This removes its ' + total + ' retained messages; other partitions are untouched.',
    async () => {
      const r = await api<Cleared>('/api/v1/queues/' + seg(queue) + '/clear?partition=' + seg(partition), { method: 'DELETE' })
      return 'Cleared ' + r.count + ' messages from ' + r.queue + ' / ' + r.partition + '.'
    }, navigate)
}

export function deleteQueueButton(queue: string, total: number, navigate: Navigate): HTMLButtonElement {
  return actionButton('Delete queue', 'delete-queue',
    'Delete queue "' + queue + '"? Its ' + total + ' retained messages, its partitions, options and consumer-group cursors are removed (traces survive). This cannot be undone; a later push re-creates an empty queue.',
    async () => {
      const r = await api<{ deleted: boolean; queue: string }>('/api/v1/resources/queues/' + seg(queue), { method: 'DELETE' })
      return { to: '/console/queues', message: r.deleted ? 'Deleted queue ' + r.queue + '.' : 'Queue ' + r.queue + ' did not exist; nothing deleted.' }
    }, navigate)
}

/** The verdict of a dead-letter move (POST /api/v1/dlq/:id/replay), as the console reads it. */
interface Moved {
  result: 'moved' | 'duplicate'
  consumerGroup: string
  originalTransactionId: string
  replayedAs: { transaction_id: string; offset: number; queueName: string }
}

/**
 * Replays one dead letter by its row id: the message goes back into its queue as a new message
 * under the transaction id dlq:<row id>, and only this group's dead letter is removed. A
 * `duplicate` verdict wrote nothing and kept the row, and says so.
 */
export function replayButton(m: DeadLetter, navigate: Navigate): HTMLButtonElement {
  return actionButton('Replay', 'replay-' + m.transactionId,
    'Replay message ' + m.transactionId + ' of ' + m.queue + ' / ' + m.partition + ' dead-lettered by ' + groupLabel(m.consumerGroup) +
      '? It is pushed again at the end of the partition as transaction dlq:' + m.id + ' (every group reading the partition receives it), and this dead letter is removed.',
    async () => {
      const r = await api<Moved>('/api/v1/dlq/' + seg(m.id) + '/replay', { method: 'POST' })
      return r.result === 'moved'
        ? 'Replayed ' + r.originalTransactionId + ' for ' + groupLabel(r.consumerGroup) + ' as ' + r.replayedAs.transaction_id + ' at offset ' + r.replayedAs.offset + '.'
        : 'Not replayed: ' + r.replayedAs.transaction_id + ' is already in ' + r.replayedAs.queueName + ' (offset ' + r.replayedAs.offset + '); the dead letter is kept.'
    }, navigate)
}

/** Purges the dead letters of one queue (admin): every group's, or one group's when given. */
export function purgeButton(queue: string, total: number, navigate: Navigate): HTMLButtonElement {
  return actionButton('Purge dead letters', 'purge-dlq',
    'Purge the ' + total + ' dead letters of queue "' + queue + '"? They are deleted without being replayed; the messages in the queue are untouched. This cannot be undone.',
    async () => {
      const r = await api<{ deleted: number; queue: string }>('/api/v1/dlq?queue=' + seg(queue), { method: 'DELETE' })
      return 'Purged ' + r.deleted + ' dead letters of ' + r.queue + '.'
    }, navigate)
}

export function moveToDlqButton(m: MessageKey, navigate: Navigate): HTMLButtonElement {
  return actionButton('Move to DLQ', 'dlq-' + m.transactionId,
    'Move message ' + m.transactionId + ' of ' + m.queue + ' / ' + m.partition + ' to the dead-letter queue for queue mode? Queue-mode consumers will not receive it; consumer groups are untouched.',
    async () => {
      const r = await api<{ transactionId: string }>('/api/v1/messages/' + seg(m.partitionId) + '/' + seg(m.transactionId) + '/dlq', { method: 'POST', body: {} })
      return 'Moved ' + r.transactionId + ' to the dead-letter queue (queue mode).'
    }, navigate)
}

// The seek route takes the end or an instant; the start of the log is the earliest instant, which
// every retained message is at or after, so the cursor lands before the oldest retained message.
const START = '1970-01-01T00:00:00.000Z'

interface Sought {
  consumerGroup: string
  queueName: string
  seekToEnd: boolean
  targetTimestamp: string | null
  partitionsUpdated: number
}

async function seek(group: string, queue: string, body: { timestamp: string } | { toEnd: true }): Promise<string> {
  const r = await api<Sought>('/api/v1/consumer-groups/' + seg(group) + '/queues/' + seg(queue) + '/seek', { method: 'POST', body })
  return 'Moved ' + groupLabel(r.consumerGroup) + ' on ' + r.queueName + ' ' + (r.seekToEnd ? 'to the end' : 'to ' + (r.targetTimestamp === START ? 'the start' : r.targetTimestamp)) + ' (' + r.partitionsUpdated + ' partitions).'
}

/** Seek to start, to end and to a time, for one group on one queue (every partition). */
export function seekButtons(group: string, queue: string, lag: number, navigate: Navigate): HTMLSpanElement {
  const where = groupLabel(group) + ' on queue "' + queue + '"'
  return h('span', { class: 'actions' },
    actionButton('Seek to start', 'seek-start-' + queue,
      'Move ' + where + ' to the start of every partition? It will receive every retained message again (its lag becomes the retained count).',
      () => seek(group, queue, { timestamp: START }), navigate, { danger: false }),
    actionButton('Seek to end', 'seek-end-' + queue,
      'Move ' + where + ' to the end of every partition? The ' + lag + ' messages it has not consumed are skipped for this group (its lag becomes 0); other groups are untouched.',
      () => seek(group, queue, { toEnd: true }), navigate, { danger: false }),
    actionButton<string>('Seek to time…', 'seek-time-' + queue,
      (at) => 'Move ' + where + ' to ' + at + ' on every partition? It will next receive the first message created at or after that instant.',
      (at) => seek(group, queue, { timestamp: at }), navigate,
      { danger: false, ask: () => {
        const answer = window.prompt('Seek ' + where + ' to which instant (ISO 8601)?', new Date(Date.now() - 3600_000).toISOString())
        return answer === null || answer.trim() === '' ? null : answer.trim()
      } }))
}

export function deleteGroupButton(group: string, queues: string[], navigate: Navigate): HTMLButtonElement {
  return actionButton('Delete group', 'delete-group',
    'Delete ' + groupLabel(group) + ' on ' + (queues.length ? 'queues ' + queues.join(', ') : 'every queue') + '? Its cursors and subscription are removed; a consumer that pops with this name again starts by the subscription rule.',
    async () => {
      const r = await api<{ consumerGroup: string; deletedPartitions: number }>('/api/v1/consumer-groups/' + seg(group), { method: 'DELETE' })
      return { to: '/console/groups', message: 'Deleted ' + groupLabel(r.consumerGroup) + ' (' + r.deletedPartitions + ' partition cursors).' }
    }, navigate)
}

/** mode 'push' or 'pop'; on is the current state, the button flips it. */
export function maintenanceButton(mode: 'push' | 'pop', on: boolean, navigate: Navigate): HTMLButtonElement {
  const path = mode === 'push' ? '/api/v1/system/maintenance' : '/api/v1/system/maintenance/pop'
  const effect = mode === 'push'
    ? (on ? 'Pushes will be accepted again.' : 'Every push on this broker (all tenants) will answer 503 until it is turned off.')
    : (on ? 'Pops will deliver again.' : 'Every pop on this broker (all tenants) will answer 204 and take no lease until it is turned off.')
  return actionButton((on ? 'Turn off ' : 'Turn on ') + mode + ' maintenance', 'maintenance-' + mode,
    'Turn ' + mode + ' maintenance ' + (on ? 'off' : 'on') + '? ' + effect,
    async () => (await api<{ message: string }>(path, { method: 'POST', body: { enabled: !on } })).message + '.', navigate, { danger: !on })
}

export function refreshStatsButton(navigate: Navigate): HTMLButtonElement {
  return actionButton('Refresh stats now', 'refresh-stats',
    'Recompute the cached queue figures (pending, processing) for this tenant now, as the stats lane would on its next pass?',
    async () => {
      const r = await api<{ queues: number; durationMs: number }>('/api/v1/stats/refresh', { method: 'POST', body: {} })
      return 'Stats refreshed for ' + r.queues + ' queues in ' + r.durationMs + ' ms.'
    }, navigate, { danger: false })
}
