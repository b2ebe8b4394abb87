// The SQS scenario every runtime runs (Node here, the Worker in test/edge): what an application on
// the unmodified AWS SDK does, each step checked against the broker's own view.
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueuesCommand,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs'
import { expect } from 'vitest'

const attrs = async (sqs: SQSClient, QueueUrl: string) =>
  (await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['All'] }))).Attributes ?? {}

/** Standard queue: send, batch, receive (long poll), delete, batch delete, visibility, attributes, purge. */
export async function standardQueueScenario(sqs: SQSClient, suffix: string): Promise<void> {
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `orders-${suffix}`, Attributes: { VisibilityTimeout: '20' } }))
  expect(QueueUrl).toMatch(new RegExp(`/000000000000/orders-${suffix}$`))
  // Idempotent with the same attributes, refused with different ones.
  expect((await sqs.send(new CreateQueueCommand({ QueueName: `orders-${suffix}`, Attributes: { VisibilityTimeout: '20' } }))).QueueUrl).toBe(QueueUrl)
  await expect(sqs.send(new CreateQueueCommand({ QueueName: `orders-${suffix}`, Attributes: { VisibilityTimeout: '21' } }))).rejects.toMatchObject({ name: 'QueueNameExists' })
  expect((await sqs.send(new GetQueueUrlCommand({ QueueName: `orders-${suffix}` }))).QueueUrl).toBe(QueueUrl)
  expect((await sqs.send(new ListQueuesCommand({ QueueNamePrefix: `orders-${suffix}` }))).QueueUrls).toEqual([QueueUrl])

  const sent = await sqs.send(
    new SendMessageCommand({ QueueUrl, MessageBody: 'hello ünïcode', MessageAttributes: { colour: { DataType: 'String', StringValue: 'red' }, n: { DataType: 'Number', StringValue: '7' } } }),
  )
  expect(sent.MessageId).toMatch(/^[0-9a-f-]{36}$/)
  const batch = await sqs.send(
    new SendMessageBatchCommand({ QueueUrl, Entries: [1, 2, 3].map((i) => ({ Id: `m${i}`, MessageBody: `body ${i}`, MessageAttributes: { i: { DataType: 'Number', StringValue: String(i) } } })) }),
  )
  expect(batch.Successful?.map((s) => s.Id).sort()).toEqual(['m1', 'm2', 'm3'])
  expect(batch.Failed ?? []).toEqual([])

  let a = await attrs(sqs, QueueUrl!)
  expect(a.ApproximateNumberOfMessages).toBe('4')
  expect(a.ApproximateNumberOfMessagesNotVisible).toBe('0')
  expect(a.VisibilityTimeout).toBe('20')
  expect(a.QueueArn).toBe(`arn:aws:sqs:eu-west-3:000000000000:orders-${suffix}`)

  const received = await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, MessageAttributeNames: ['All'], MessageSystemAttributeNames: ['All'] }))
  const messages = received.Messages ?? []
  expect(messages.map((m) => m.Body).sort()).toEqual(['body 1', 'body 2', 'body 3', 'hello ünïcode'])
  const hello = messages.find((m) => m.Body === 'hello ünïcode')!
  expect(hello.MessageId).toBe(sent.MessageId)
  expect(hello.MessageAttributes?.colour?.StringValue).toBe('red')
  expect(hello.Attributes?.ApproximateReceiveCount).toBe('1')
  a = await attrs(sqs, QueueUrl!)
  expect(a.ApproximateNumberOfMessages).toBe('0')
  expect(a.ApproximateNumberOfMessagesNotVisible).toBe('4')

  // Visibility 0 hands a message back at once; the others are deleted, one alone and two in a batch.
  await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl, ReceiptHandle: hello.ReceiptHandle!, VisibilityTimeout: 0 }))
  const others = messages.filter((m) => m !== hello)
  await sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: others[0]!.ReceiptHandle! }))
  const deleted = await sqs.send(new DeleteMessageBatchCommand({ QueueUrl, Entries: others.slice(1).map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle! })) }))
  expect(deleted.Successful).toHaveLength(2)
  a = await attrs(sqs, QueueUrl!)
  expect(a.ApproximateNumberOfMessages).toBe('1')
  expect(a.ApproximateNumberOfMessagesNotVisible).toBe('0')

  // The returned message comes back; a forged handle is refused.
  const again = await sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 1 }))
  expect(again.Messages?.map((m) => m.MessageId)).toEqual([sent.MessageId])
  const forged = again.Messages![0]!.ReceiptHandle!.replace(/.$/, (ch) => (ch === 'A' ? 'B' : 'A'))
  await expect(sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: forged }))).rejects.toMatchObject({ name: 'ReceiptHandleIsInvalid' })

  // A long poll on an empty queue is answered when a message arrives.
  await sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: again.Messages![0]!.ReceiptHandle! }))
  const poll = sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 10 }))
  await new Promise((r) => setTimeout(r, 300))
  await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'late' }))
  expect((await poll).Messages?.map((m) => m.Body)).toEqual(['late'])

  // Purge empties it; a second purge within 60 s is refused as AWS does.
  await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'to purge' }))
  await sqs.send(new PurgeQueueCommand({ QueueUrl }))
  expect((await attrs(sqs, QueueUrl!)).ApproximateNumberOfMessages).toBe('0')
  await expect(sqs.send(new PurgeQueueCommand({ QueueUrl }))).rejects.toMatchObject({ name: 'PurgeQueueInProgress' })

  await sqs.send(new DeleteQueueCommand({ QueueUrl }))
  await expect(sqs.send(new GetQueueUrlCommand({ QueueName: `orders-${suffix}` }))).rejects.toMatchObject({ name: 'QueueDoesNotExist' })
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** FIFO: group order, dedup (explicit and content-based), per-queue delay, per-message delay, redrive. */
export async function fifoDelayRedriveScenario(sqs: SQSClient, suffix: string): Promise<void> {
  const { QueueUrl: fifo } = await sqs.send(new CreateQueueCommand({ QueueName: `jobs-${suffix}.fifo`, Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true' } }))
  const first = await sqs.send(new SendMessageCommand({ QueueUrl: fifo, MessageBody: 'a1', MessageGroupId: 'a', MessageDeduplicationId: 'x1' }))
  const repeat = await sqs.send(new SendMessageCommand({ QueueUrl: fifo, MessageBody: 'a1 again', MessageGroupId: 'a', MessageDeduplicationId: 'x1' }))
  expect(repeat.MessageId).toBe(first.MessageId)
  await sqs.send(new SendMessageCommand({ QueueUrl: fifo, MessageBody: 'a2', MessageGroupId: 'a' }))
  await sqs.send(new SendMessageCommand({ QueueUrl: fifo, MessageBody: 'a2', MessageGroupId: 'a' }))
  await sqs.send(new SendMessageCommand({ QueueUrl: fifo, MessageBody: 'b1', MessageGroupId: 'b' }))
  expect((await attrs(sqs, fifo!)).ApproximateNumberOfMessages).toBe('3')
  // A group is consumed in order, one message in flight at a time.
  const r1 = await sqs.send(new ReceiveMessageCommand({ QueueUrl: fifo, MaxNumberOfMessages: 10, MessageSystemAttributeNames: ['MessageGroupId', 'SequenceNumber'] }))
  expect(r1.Messages?.map((m) => m.Body).sort()).toEqual(['a1', 'b1'])
  const a1 = r1.Messages!.find((m) => m.Body === 'a1')!
  expect(a1.Attributes?.MessageGroupId).toBe('a')
  expect((await sqs.send(new ReceiveMessageCommand({ QueueUrl: fifo, MaxNumberOfMessages: 10 }))).Messages ?? []).toEqual([])
  await sqs.send(new DeleteMessageCommand({ QueueUrl: fifo, ReceiptHandle: a1.ReceiptHandle! }))
  const r2 = await sqs.send(new ReceiveMessageCommand({ QueueUrl: fifo, MaxNumberOfMessages: 10 }))
  expect(r2.Messages?.map((m) => m.Body)).toEqual(['a2'])
  await expect(sqs.send(new SendMessageCommand({ QueueUrl: fifo, MessageBody: 'no group' }))).rejects.toMatchObject({ name: 'MissingParameter' })

  // Delay: per queue, and per message; the delayed one is counted as delayed meanwhile.
  const { QueueUrl: slow } = await sqs.send(new CreateQueueCommand({ QueueName: `slow-${suffix}`, Attributes: { DelaySeconds: '1' } }))
  await sqs.send(new SendMessageCommand({ QueueUrl: slow, MessageBody: 'queue delay' }))
  expect((await sqs.send(new ReceiveMessageCommand({ QueueUrl: slow }))).Messages ?? []).toEqual([])
  expect((await sqs.send(new ReceiveMessageCommand({ QueueUrl: slow, WaitTimeSeconds: 5 }))).Messages?.map((m) => m.Body)).toEqual(['queue delay'])
  const { QueueUrl: later } = await sqs.send(new CreateQueueCommand({ QueueName: `later-${suffix}` }))
  const delayed = await sqs.send(new SendMessageCommand({ QueueUrl: later, MessageBody: 'message delay', DelaySeconds: 1 }))
  expect((await attrs(sqs, later!)).ApproximateNumberOfMessagesDelayed).toBe('1')
  expect((await sqs.send(new ReceiveMessageCommand({ QueueUrl: later }))).Messages ?? []).toEqual([])
  const got = await sqs.send(new ReceiveMessageCommand({ QueueUrl: later, WaitTimeSeconds: 8 }))
  expect(got.Messages?.map((m) => [m.Body, m.MessageId])).toEqual([['message delay', delayed.MessageId]])

  // Redrive: after maxReceiveCount receives the next receive moves the message to the DLQ.
  const { QueueUrl: dlq } = await sqs.send(new CreateQueueCommand({ QueueName: `dead-${suffix}` }))
  const dlqArn = (await attrs(sqs, dlq!)).QueueArn!
  const { QueueUrl: work } = await sqs.send(
    new CreateQueueCommand({ QueueName: `work-${suffix}`, Attributes: { VisibilityTimeout: '1', RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 2 }) } }),
  )
  await sqs.send(new SendMessageCommand({ QueueUrl: work, MessageBody: 'poison' }))
  for (const count of ['1', '2']) {
    const r = await sqs.send(new ReceiveMessageCommand({ QueueUrl: work, WaitTimeSeconds: 5, MessageSystemAttributeNames: ['ApproximateReceiveCount'] }))
    expect(r.Messages?.map((m) => [m.Body, m.Attributes?.ApproximateReceiveCount])).toEqual([['poison', count]])
    await sleep(1100)
  }
  expect((await sqs.send(new ReceiveMessageCommand({ QueueUrl: work, WaitTimeSeconds: 1 }))).Messages ?? []).toEqual([])
  const dead = await sqs.send(new ReceiveMessageCommand({ QueueUrl: dlq, WaitTimeSeconds: 2, MessageSystemAttributeNames: ['All'] }))
  expect(dead.Messages?.map((m) => m.Body)).toEqual(['poison'])
  expect(dead.Messages![0]!.Attributes?.DeadLetterQueueSourceArn).toBe(dlqArn.replace(`dead-${suffix}`, `work-${suffix}`))
  expect((await attrs(sqs, work!)).ApproximateNumberOfMessages).toBe('0')
}
