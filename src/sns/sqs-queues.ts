// The SQS queues an SNS publish delivers to, as the SQS facade stores them: its registry says
// which queues exist and how wide they are, and a copy is stored in the SQS envelope SendMessage
// writes, so ReceiveMessage on the subscribed queue answers it with the right body, attributes and
// MD5 digests. All copies of a publish go into one engine transaction, encrypted where their queue
// is, and wake the receivers long-polling here, as the transaction route does.
import type { AwsCall } from '../aws/endpoint.js'
import { AwsError } from '../aws/errors.js'
import type { AwsContext } from '../aws/mount.js'
import { HttpError } from '../errors.js'
import { withEncryption } from '../messages/encode.js'
import type { PushItem } from '../messages/push-items.js'
import { wakePops } from '../messages/wake-pops.js'
import { wrap, type Envelope } from '../sqs/envelope.js'
import { nameFromArn } from '../sqs/queue-url.js'
import { getQueue, type QueueRecord } from '../sqs/registry.js'
import { snsInvalidParameter } from './errors.js'
import type { SnsHost, SnsQueues } from './host.js'

export function sqsQueues(call: AwsCall<AwsContext>, account: string): SnsQueues {
  const c = call.context
  const records = new Map<string, Promise<QueueRecord | null>>()
  const lookup = (arn: string): Promise<QueueRecord | null> => {
    let found = records.get(arn)
    if (found === undefined) {
      const name = nameFromArn(arn, account)
      found = name === null ? Promise.resolve(null) : getQueue(c, name).then((s) => s?.record ?? null)
      records.set(arn, found)
    }
    return found
  }
  return {
    async find(arn) {
      const record = await lookup(arn)
      return record === null ? null : { fifo: record.fifo }
    },
    async deliver(copies) {
      const now = Date.now()
      const items: (PushItem & { where: string })[] = []
      for (const [i, { queueArn, delivery }] of copies.entries()) {
        const record = await lookup(queueArn)
        if (record === null) throw new AwsError('InvalidParameter', 'Invalid parameter: a subscribed queue does not exist', 400)
        const envelope: Envelope = {
          b: delivery.body,
          ...(Object.keys(delivery.attributes).length > 0 ? { a: delivery.attributes } : {}),
          t: now,
          k: call.key.accessKeyId,
          ...(delivery.groupId !== undefined ? { g: delivery.groupId } : {}),
          ...(delivery.deduplicationId !== undefined ? { d: delivery.deduplicationId } : {}),
        }
        // A standard queue spreads over its fixed width; a FIFO queue's partition is the group.
        const partition = record.fifo ? (delivery.groupId as string) : String(Math.floor(Math.random() * record.width))
        items.push({ queue: record.name, partition, transactionId: delivery.deduplicationId ?? null, traceId: null, data: wrap(envelope), where: `copies[${i}]` })
      }
      const result = await withEncryption(
        c,
        items,
        (k) => items[k]?.where ?? '',
        (encoded) => c.get('db').call('log_transaction_v1', { ops: encoded.map((item) => ({ type: 'push' as const, items: [{ ...item, index: 0 }] })), requiredLeases: [] }),
        () => null,
      ).catch((error: unknown) => {
        // A wrapped copy escapes the message again, so it can outgrow MAX_FRAME_BYTES where the
        // publish itself did not: SNS's own name for a message too large, and nothing stored.
        if (error instanceof HttpError && error.status === 413) throw snsInvalidParameter(`Invalid parameter: Message too long: ${error.message}`)
        throw error
      })
      if (!result.success) throw new AwsError('InvalidParameter', `Invalid parameter: the publish could not be stored (${result.code ?? 'refused'})`, 400)
      wakePops(c, items.map((i) => i.queue))
      c.get('metrics').pushed(result.results.map((r) => (r.type === 'push' ? r.status : 'queued')))
    },
  }
}

/** The SNS actions' view of one call on the broker's AWS endpoint. */
export function snsHostOf(call: AwsCall<AwsContext>): SnsHost {
  const account = call.context.get('config').AWS_ACCOUNT_ID
  return { db: call.context.get('db'), account, queues: sqsQueues(call, account) }
}
