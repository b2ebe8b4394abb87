// Browser module actions.js: the console's actions, each one public API call (SDK-SURFACE A1, A3,
// API §5.12, §5.13, §5.15): clear a queue or a partition, delete a queue, retry a dead letter,
// move a message to the DLQ, seek or delete a consumer group, maintenance on and off, refresh
// stats. A button is drawn only when the broker would accept its route from this session, and
// each asks for a confirmation that names what will change before it sends anything; the answer
// (or the refusal) is shown as the next page's flash line.
export const ACTIONS_JS = String.raw`
import { api, session, seg } from './api.js'
import { h } from './dom.js'

const QUEUE_MODE = '__QUEUE_MODE__'
// A group name no one uses: the write probe below is refused by validation before it could touch it.
const PROBE_GROUP = '__console_capability_probe__'
const capsBySession = new Map()

// 200 or 400 mean the route's role set admitted us (the guard runs before validation); 401/403 mean
// it did not. Anything else (a 503) decides nothing, so the answer is not remembered.
const admitted = (request) => request.then(() => true, (error) => {
  if (error.status === 400) return true
  if (error.status === 401 || error.status === 403) return false
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
export async function capabilities() {
  const key = session.token() + '\u0000' + session.tenant()
  if (!capsBySession.has(key)) {
    const asked = Promise.all([
      admitted(api('/api/v1/system/maintenance')),
      admitted(api('/api/v1/consumer-groups/' + PROBE_GROUP + '/subscription', { method: 'POST', body: {} })),
    ]).then(([admin, write]) => ({ admin, write: write || admin }), () => {
      capsBySession.delete(key)
      return { admin: false, write: false }
    })
    capsBySession.set(key, asked)
  }
  return capsBySession.get(key)
}

/** Kept for the views written before capabilities(): admin-only buttons. */
export const isAdmin = async () => (await capabilities()).admin

export const groupLabel = (group) => (group === QUEUE_MODE ? 'queue mode' : 'consumer group "' + group + '"')

/**
 * A button that runs action() once the operator confirms question, then reloads the view (or goes
 * to the path action() returns as { to, message }) with the outcome. ask(), when given, runs first
 * and may return null to cancel (a prompt for a seek time); its answer is passed on.
 */
export function actionButton(label, testid, question, action, navigate, { danger = true, ask = null } = {}) {
  return h('button', { type: 'button', class: danger ? 'action danger' : 'action', 'data-action': testid, 'data-testid': testid, onclick: async () => {
    const answer = ask ? ask() : undefined
    if (ask && answer === null) return
    if (!window.confirm(typeof question === 'function' ? question(answer) : question)) return
    let outcome
    try {
      outcome = await action(answer)
    } catch (error) {
      outcome = 'Not done: ' + (error.status ? error.status + ' ' : '') + error.message
    }
    const { to, message } = typeof outcome === 'string' ? { to: null, message: outcome } : outcome
    navigate(to || location.pathname + location.search, message)
  } }, label)
}

export function clearQueueButton(queue, total, navigate) {
  return actionButton('Clear queue', 'clear-queue',
    'Clear queue "' + queue + '"? This removes all ' + total + ' retained messages of every partition. Offsets continue and consumer groups keep their positions; dead letters are kept.',
    async () => {
      const r = await api('/api/v1/queues/' + seg(queue) + '/clear', { method: 'DELETE' })
      return 'Cleared ' + r.count + ' messages from ' + r.queue + ' (all partitions).'
    }, navigate)
}

export function clearPartitionButton(queue, partition, total, navigate) {
  return actionButton('Clear', 'clear-partition-' + partition,
    'Clear partition "' + partition + '" of queue "' + queue + '"? This removes its ' + total + ' retained messages; other partitions are untouched.',
    async () => {
      const r = await api('/api/v1/queues/' + seg(queue) + '/clear?partition=' + seg(partition), { method: 'DELETE' })
      return 'Cleared ' + r.count + ' messages from ' + r.queue + ' / ' + r.partition + '.'
    }, navigate)
}

export function deleteQueueButton(queue, total, navigate) {
  return actionButton('Delete queue', 'delete-queue',
    'Delete queue "' + queue + '"? Its ' + total + ' retained messages, its partitions, options and consumer-group cursors are removed (traces survive). This cannot be undone; a later push re-creates an empty queue.',
    async () => {
      const r = await api('/api/v1/resources/queues/' + seg(queue), { method: 'DELETE' })
      return { to: '/console/queues', message: r.deleted ? 'Deleted queue ' + r.queue + '.' : 'Queue ' + r.queue + ' did not exist; nothing deleted.' }
    }, navigate)
}

export function retryButton(m, navigate) {
  return actionButton('Retry', 'retry-' + m.transactionId,
    'Retry message ' + m.transactionId + ' of ' + m.queue + ' / ' + m.partition + ' for ' + groupLabel(m.consumerGroup) + '? Its dead letter is removed and that group receives the message again.',
    async () => {
      const r = await api('/api/v1/messages/' + seg(m.partitionId) + '/' + seg(m.transactionId) + '/retry?consumerGroup=' + seg(m.consumerGroup), { method: 'POST', body: {} })
      return 'Retried ' + r.transactionId + ' for ' + groupLabel(r.consumerGroup) + (r.redelivery === 'repush' ? ' (re-pushed as ' + r.newTransactionId + ').' : '.')
    }, navigate)
}

export function moveToDlqButton(m, navigate) {
  return actionButton('Move to DLQ', 'dlq-' + m.transactionId,
    'Move message ' + m.transactionId + ' of ' + m.queue + ' / ' + m.partition + ' to the dead-letter queue for queue mode? Queue-mode consumers will not receive it; consumer groups are untouched.',
    async () => {
      const r = await api('/api/v1/messages/' + seg(m.partitionId) + '/' + seg(m.transactionId) + '/dlq', { method: 'POST', body: {} })
      return 'Moved ' + r.transactionId + ' to the dead-letter queue (queue mode).'
    }, navigate)
}

// The seek route takes the end or an instant; the start of the log is the earliest instant, which
// every retained message is at or after, so the cursor lands before the oldest retained message.
const START = '1970-01-01T00:00:00.000Z'

async function seek(group, queue, body) {
  const r = await api('/api/v1/consumer-groups/' + seg(group) + '/queues/' + seg(queue) + '/seek', { method: 'POST', body })
  return 'Moved ' + groupLabel(r.consumerGroup) + ' on ' + r.queueName + ' ' + (r.seekToEnd ? 'to the end' : 'to ' + (r.targetTimestamp === START ? 'the start' : r.targetTimestamp)) + ' (' + r.partitionsUpdated + ' partitions).'
}

/** Seek to start, to end and to a time, for one group on one queue (every partition). */
export function seekButtons(group, queue, lag, navigate) {
  const where = groupLabel(group) + ' on queue "' + queue + '"'
  return h('span', { class: 'actions' },
    actionButton('Seek to start', 'seek-start-' + queue,
      'Move ' + where + ' to the start of every partition? It will receive every retained message again (its lag becomes the retained count).',
      () => seek(group, queue, { timestamp: START }), navigate, { danger: false }),
    actionButton('Seek to end', 'seek-end-' + queue,
      'Move ' + where + ' to the end of every partition? The ' + lag + ' messages it has not consumed are skipped for this group (its lag becomes 0); other groups are untouched.',
      () => seek(group, queue, { toEnd: true }), navigate, { danger: false }),
    actionButton('Seek to time…', 'seek-time-' + queue,
      (at) => 'Move ' + where + ' to ' + at + ' on every partition? It will next receive the first message created at or after that instant.',
      (at) => seek(group, queue, { timestamp: at }), navigate,
      { danger: false, ask: () => {
        const answer = window.prompt('Seek ' + where + ' to which instant (ISO 8601)?', new Date(Date.now() - 3600_000).toISOString())
        return answer === null || answer.trim() === '' ? null : answer.trim()
      } }))
}

export function deleteGroupButton(group, queues, navigate) {
  return actionButton('Delete group', 'delete-group',
    'Delete ' + groupLabel(group) + ' on ' + (queues.length ? 'queues ' + queues.join(', ') : 'every queue') + '? Its cursors and subscription are removed; a consumer that pops with this name again starts by the subscription rule.',
    async () => {
      const r = await api('/api/v1/consumer-groups/' + seg(group), { method: 'DELETE' })
      return { to: '/console/groups', message: 'Deleted ' + groupLabel(r.consumerGroup) + ' (' + r.deletedPartitions + ' partition cursors).' }
    }, navigate)
}

/** mode 'push' or 'pop'; on is the current state, the button flips it. */
export function maintenanceButton(mode, on, navigate) {
  const path = mode === 'push' ? '/api/v1/system/maintenance' : '/api/v1/system/maintenance/pop'
  const effect = mode === 'push'
    ? (on ? 'Pushes will be accepted again.' : 'Every push on this broker (all tenants) will answer 503 until it is turned off.')
    : (on ? 'Pops will deliver again.' : 'Every pop on this broker (all tenants) will answer 204 and take no lease until it is turned off.')
  return actionButton((on ? 'Turn off ' : 'Turn on ') + mode + ' maintenance', 'maintenance-' + mode,
    'Turn ' + mode + ' maintenance ' + (on ? 'off' : 'on') + '? ' + effect,
    async () => (await api(path, { method: 'POST', body: { enabled: !on } })).message + '.', navigate, { danger: !on })
}

export function refreshStatsButton(navigate) {
  return actionButton('Refresh stats now', 'refresh-stats',
    'Recompute the cached queue figures (pending, processing) for this tenant now, as the stats lane would on its next pass?',
    async () => {
      const r = await api('/api/v1/stats/refresh', { method: 'POST', body: {} })
      return 'Stats refreshed for ' + r.queues + ' queues in ' + r.durationMs + ' ms.'
    }, navigate, { danger: false })
}
`
