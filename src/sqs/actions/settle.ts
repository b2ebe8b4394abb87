// DeleteMessage (ack completed under the handle's lease) and ChangeMessageVisibility (the lease set
// to now + VisibilityTimeout, shorter or longer, or at zero ack `failed`, which hands the message back at once and counts the delivery,
// so a consumer that always hands back still reaches its queue's maxReceiveCount). A stale handle is a
// success for DeleteMessage, as AWS documents; only a handle this broker did not sign, or signed
// for another queue, is ReceiptHandleIsInvalid.
import type { AwsAction } from '../../aws/endpoint.js'
import type { AwsContext } from '../../aws/mount.js'
import { AwsError } from '../../aws/errors.js'
import { optionalInt, requiredString, structList, type Input } from '../../aws/input.js'
import { ROLE_SETS } from '../../http/route.js'
import { QUEUE_MODE } from '../../names.js'
import { receiptKeyOf, resolveQueue, type SqsCall } from '../context.js'
import { messageNotInflight, missing, receiptHandleIsInvalid } from '../errors.js'
import { openReceipt, type Receipt } from '../receipt.js'
import type { QueueRecord } from '../registry.js'
import { checkBatch, failedEntry } from './send.js'

type Action = AwsAction<AwsContext>

async function receiptOf(call: SqsCall, record: QueueRecord, input: Input): Promise<Receipt> {
  const handle = requiredString(input, 'ReceiptHandle')
  if (handle === '') throw missing('ReceiptHandle')
  const receipt = await openReceipt(await receiptKeyOf(call), handle)
  if (receipt === null || receipt.queue !== record.name) throw receiptHandleIsInvalid(handle)
  return receipt
}

async function ack(call: SqsCall, receipts: readonly Receipt[], status: 'completed' | 'failed') {
  return call.context.get('db').call('log_ack_v1', {
    acks: receipts.map((r, index) => ({ index, partitionId: r.partitionId, transactionId: r.transactionId, offset: r.offset, consumerGroup: QUEUE_MODE, leaseId: r.leaseId, status, error: null })),
  })
}

async function changeVisibility(call: SqsCall, receipt: Receipt, seconds: number): Promise<void> {
  if (seconds === 0) {
    // `failed`, not `retry`: the engine counts a failure (the next ApproximateReceiveCount) and,
    // with the engine's retry limit out of reach, never drops the message itself.
    const [result] = await ack(call, [receipt], 'failed')
    if (!result?.success) throw messageNotInflight()
    return
  }
  // SQS restarts the visibility from now, shorter or longer than what is left of it.
  const [renewed] = await call.context.get('db').call('log_renew_v1', { items: [{ index: 0, leaseId: receipt.leaseId, seconds, exact: true }] })
  if (!renewed?.success) throw messageNotInflight()
}

const deleteMessage: Action = {
  roles: ROLE_SETS.RW_A,
  async run(input, call) {
    const { record } = await resolveQueue(call, input)
    await ack(call, [await receiptOf(call, record, input)], 'completed')
    return null
  },
}

const deleteMessageBatch: Action = {
  roles: ROLE_SETS.RW_A,
  responseShapes: {
    Successful: { kind: 'list', query: 'DeleteMessageBatchResultEntry', flat: true },
    Failed: { kind: 'list', query: 'BatchResultErrorEntry', flat: true },
  },
  async run(input, call) {
    const { record } = await resolveQueue(call, input)
    const entries = structList(input, 'Entries')
    const ids = checkBatch(entries)
    const failed: ReturnType<typeof failedEntry>[] = []
    const good: { id: string; receipt: Receipt }[] = []
    for (const [i, entry] of entries.entries()) {
      try {
        good.push({ id: ids[i] as string, receipt: await receiptOf(call, record, entry) })
      } catch (error) {
        if (!(error instanceof AwsError)) throw error
        failed.push(failedEntry(ids[i] as string, error))
      }
    }
    if (good.length > 0) await ack(call, good.map((g) => g.receipt), 'completed')
    return { Successful: good.map((g) => ({ Id: g.id })), Failed: failed }
  },
}

const changeMessageVisibility: Action = {
  roles: ROLE_SETS.RW_A,
  async run(input, call) {
    const { record } = await resolveQueue(call, input)
    const receipt = await receiptOf(call, record, input)
    const seconds = optionalInt(input, 'VisibilityTimeout', 0, 43_200)
    if (seconds === undefined) throw missing('VisibilityTimeout')
    await changeVisibility(call, receipt, seconds)
    return null
  },
}

const changeMessageVisibilityBatch: Action = {
  roles: ROLE_SETS.RW_A,
  responseShapes: {
    Successful: { kind: 'list', query: 'ChangeMessageVisibilityBatchResultEntry', flat: true },
    Failed: { kind: 'list', query: 'BatchResultErrorEntry', flat: true },
  },
  async run(input, call) {
    const { record } = await resolveQueue(call, input)
    const entries = structList(input, 'Entries')
    const ids = checkBatch(entries)
    const results = await Promise.all(
      entries.map(async (entry, i) => {
        const id = ids[i] as string
        try {
          const seconds = optionalInt(entry, 'VisibilityTimeout', 0, 43_200)
          if (seconds === undefined) throw missing('VisibilityTimeout')
          await changeVisibility(call, await receiptOf(call, record, entry), seconds)
          return { ok: { Id: id } }
        } catch (error) {
          if (!(error instanceof AwsError)) throw error
          return { failed: failedEntry(id, error) }
        }
      }),
    )
    return { Successful: results.flatMap((r) => (r.ok ? [r.ok] : [])), Failed: results.flatMap((r) => (r.failed ? [r.failed] : [])) }
  },
}

export const settleActions = {
  DeleteMessage: deleteMessage,
  DeleteMessageBatch: deleteMessageBatch,
  ChangeMessageVisibility: changeMessageVisibility,
  ChangeMessageVisibilityBatch: changeMessageVisibilityBatch,
}
