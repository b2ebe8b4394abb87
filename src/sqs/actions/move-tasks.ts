// Message move tasks: the redrive run backwards, from a dead-letter queue to the queue each copy
// came from (or to DestinationArn). The move runs inside the StartMessageMoveTask request, within a
// time budget, message by message, each a push and an ack in one transaction; the task's record in
// the key/value store says how far it got, so any replica can answer ListMessageMoveTasks.
import type { AwsAction } from '../../aws/endpoint.js'
import type { AwsContext } from '../../aws/mount.js'
import { optionalInt, optionalString, requiredString } from '../../aws/input.js'
import { ROLE_SETS } from '../../http/route.js'
import { KV_LIMITS } from '../../kv/limits.js'
import { wakePops } from '../../messages/wake-pops.js'
import { QUEUE_MODE } from '../../names.js'
import { accountOf, type SqsCall } from '../context.js'
import { unwrap, wrap } from '../envelope.js'
import { invalidParameter, resourceNotFound, unsupported } from '../errors.js'
import { nameFromArn } from '../queue-url.js'
import { getQueue, NAMESPACE, type QueueRecord } from '../registry.js'
import { popOne } from './receive.js'
import { nextLane } from './send.js'

type Action = AwsAction<AwsContext>

/** How long one StartMessageMoveTask moves before it answers; what is left stays in the DLQ. */
const BUDGET_MS = 10_000
const LEASE_SECONDS = 30

interface TaskRecord {
  TaskHandle: string
  SourceArn: string
  DestinationArn?: string
  Status: 'COMPLETED' | 'CANCELLED' | 'FAILED'
  ApproximateNumberOfMessagesMoved: number
  ApproximateNumberOfMessagesToMove: number
  MaxNumberOfMessagesPerSecond?: number
  StartedTimestamp: number
  FailureReason?: string
}

async function queueOfArn(call: SqsCall, arn: string, what: string): Promise<QueueRecord> {
  const name = nameFromArn(arn, accountOf(call))
  const stored = name === null ? null : await getQueue(call.context, name)
  if (stored === null) throw resourceNotFound(`The resource that you specified for the ${what} parameter doesn't exist.`)
  return stored.record
}

async function moveOne(call: SqsCall, source: QueueRecord, destination: QueueRecord | null): Promise<'moved' | 'empty' | 'skipped'> {
  const c = call.context
  const frame = await popOne(call, source, LEASE_SECONDS)
  if (frame === null) return 'empty'
  const envelope = unwrap(frame.data, frame.createdAt)
  const target = destination ?? (envelope.src !== undefined ? ((await getQueue(c, envelope.src))?.record ?? null) : null)
  if (target === null) return 'skipped'
  const back = { ...envelope }
  delete back.src
  delete back.oid
  // Moved back, it starts over as a new message: carrying its receives would redrive it again at once.
  delete back.rc
  const partition = target.fifo ? (envelope.g ?? 'Default') : nextLane(target.width)
  const result = await c.get('db').call('log_transaction_v1', {
    ops: [
      { type: 'push', items: [{ index: 0, queue: target.name, partition, data: wrap(back) }] },
      { type: 'ack', partitionId: frame.partitionId, transactionId: frame.transactionId, offset: frame.offset, consumerGroup: QUEUE_MODE, leaseId: frame.leaseId, status: 'completed', error: null },
    ],
    requiredLeases: [frame.leaseId],
  })
  if (result.success) wakePops(c, [target.name])
  return result.success ? 'moved' : 'skipped'
}

const startMessageMoveTask: Action = {
  roles: ROLE_SETS.A,
  async run(input, call) {
    const sourceArn = requiredString(input, 'SourceArn')
    const destinationArn = optionalString(input, 'DestinationArn')
    const rate = optionalInt(input, 'MaxNumberOfMessagesPerSecond', 1, 500)
    const source = await queueOfArn(call, sourceArn, 'SourceArn')
    const destination = destinationArn === undefined ? null : await queueOfArn(call, destinationArn, 'DestinationArn')
    const depth = await call.context.get('db').call('log_queue_depth_v1', { queue: source.name, group: QUEUE_MODE })
    const handle = crypto.randomUUID()
    const started = Date.now()
    let moved = 0
    let skipped = 0
    while (Date.now() - started < BUDGET_MS && moved + skipped < depth.ready) {
      const outcome = await moveOne(call, source, destination)
      if (outcome === 'empty') break
      if (outcome === 'moved') moved++
      else skipped++
      if (rate !== undefined && moved % rate === 0) await new Promise((r) => setTimeout(r, Math.max(0, started + (moved / rate) * 1000 - Date.now())))
    }
    const task: TaskRecord = {
      TaskHandle: handle,
      SourceArn: sourceArn,
      ...(destinationArn !== undefined ? { DestinationArn: destinationArn } : {}),
      Status: skipped > 0 ? 'FAILED' : 'COMPLETED',
      ApproximateNumberOfMessagesMoved: moved,
      ApproximateNumberOfMessagesToMove: depth.ready,
      ...(rate !== undefined ? { MaxNumberOfMessagesPerSecond: rate } : {}),
      StartedTimestamp: started,
      ...(skipped > 0 ? { FailureReason: `${skipped} messages name no source queue that exists; they stay in the dead-letter queue` } : {}),
    }
    await call.context.get('db').call('kv_apply_v1', { ops: [{ ns: NAMESPACE, op: 'put', key: `task:${source.name}:${started}:${handle}`, value: task, ttlSeconds: 14 * 86_400 }], limits: KV_LIMITS })
    return { TaskHandle: handle }
  },
}

const cancelMessageMoveTask: Action = {
  roles: ROLE_SETS.A,
  async run(input) {
    requiredString(input, 'TaskHandle')
    // A task runs inside its StartMessageMoveTask request, so none is ever running to cancel.
    throw unsupported('A message move task finishes within its StartMessageMoveTask request; there is no running task to cancel.')
  },
}

const listMessageMoveTasks: Action = {
  roles: ROLE_SETS.R_RW_A,
  responseShapes: { Results: { kind: 'list', query: 'ListMessageMoveTasksResultEntry', flat: true } },
  async run(input, call) {
    const sourceArn = requiredString(input, 'SourceArn')
    const max = optionalInt(input, 'MaxResults', 1, 10) ?? 1
    const source = await queueOfArn(call, sourceArn, 'SourceArn')
    const result = await call.context.get('db').call('kv_apply_v1', { ops: [{ ns: NAMESPACE, op: 'getPrefix', prefix: `task:${source.name}:`, limit: 1000 }], limits: KV_LIMITS })
    if (!('results' in result)) throw invalidParameter('task listing failed')
    const rows = (((result.results as unknown[])[0] as { rows?: { value: TaskRecord }[] }).rows ?? []).map((r) => r.value)
    rows.sort((a, b) => b.StartedTimestamp - a.StartedTimestamp)
    return { Results: rows.slice(0, max) }
  },
}

export const moveTaskActions = {
  StartMessageMoveTask: startMessageMoveTask,
  CancelMessageMoveTask: cancelMessageMoveTask,
  ListMessageMoveTasks: listMessageMoveTasks,
}
