// Browser module actions.js: the console's admin actions (SDK-SURFACE A1, A3): clear a queue or a
// partition, retry a dead letter, move a message to the DLQ. The buttons are drawn only for a
// caller the broker treats as admin, and each asks for a confirmation that names what will change
// before it sends anything; the answer (or the refusal) is shown as the next page's flash line.
export const ACTIONS_JS = String.raw`
import { api, session, seg } from './api.js'
import { h } from './dom.js'

const QUEUE_MODE = '__QUEUE_MODE__'
const adminByToken = new Map()

/**
 * Whether the broker treats this session as admin. The console cannot read roles out of a token
 * (the claim mapping is the broker's), so it asks an admin-only read that changes nothing:
 * GET /api/v1/system/maintenance answers 200 exactly for the admin role (any caller when
 * authentication is off). Asked once per token.
 */
export async function isAdmin() {
  const key = session.token()
  if (!adminByToken.has(key)) {
    adminByToken.set(key, api('/api/v1/system/maintenance').then(() => true, () => false))
  }
  return adminByToken.get(key)
}

const groupLabel = (group) => (group === QUEUE_MODE ? 'queue mode' : 'consumer group "' + group + '"')

/** A button that runs action() after the operator confirms question; then navigate reloads the page with the outcome. */
function actionButton(label, testid, question, action, navigate) {
  return h('button', { type: 'button', class: 'danger', 'data-testid': testid, onclick: async () => {
    if (!window.confirm(question)) return
    let message
    try {
      message = await action()
    } catch (error) {
      message = 'Not done: ' + (error.status ? error.status + ' ' : '') + error.message
    }
    navigate(location.pathname + location.search, message)
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
`
