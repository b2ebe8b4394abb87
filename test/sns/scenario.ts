// The SNS scenario every runtime runs (Node in test/sns, the Worker in test/edge): the unmodified
// @aws-sdk/client-sns publishes and @aws-sdk/client-sqs receives, through the broker's one AWS
// endpoint. The SQS client checks the MD5 digests of every message it receives.
import {
  CreateTopicCommand,
  GetTopicAttributesCommand,
  ListSubscriptionsByTopicCommand,
  ListTagsForResourceCommand,
  ListTopicsCommand,
  PublishBatchCommand,
  PublishCommand,
  type SNSClient,
  SubscribeCommand,
  TagResourceCommand,
} from '@aws-sdk/client-sns'
import { CreateQueueCommand, DeleteMessageCommand, GetQueueAttributesCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs'
import { expect } from 'vitest'
import { signedRequest } from '../aws/sign.js'
import { SQS_KEY } from '../sqs/sqs-client.js'

async function createQueue(sqs: SQSClient, name: string, attributes: Record<string, string> = {}) {
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }))
  const arn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }))).Attributes?.QueueArn
  return { url: QueueUrl as string, arn: arn as string }
}

/** Everything the queue holds now, deleted as it is read (a few receives of ten). */
async function receiveAll(sqs: SQSClient, QueueUrl: string) {
  const out: { body: string; attributes: Record<string, { DataType?: string; StringValue?: string }> }[] = []
  for (let round = 0; round < 5; round++) {
    const got = await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: round === 0 ? 1 : 0, MessageAttributeNames: ['All'] }))
    const messages = got.Messages ?? []
    if (messages.length === 0 && round > 0) break
    for (const m of messages) {
      out.push({ body: m.Body ?? '', attributes: (m.MessageAttributes ?? {}) as never })
      await sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: m.ReceiptHandle }))
    }
  }
  return out
}

/** Fan-out to two queues with a filter, raw delivery, a batch, list/attribute/tag reads. */
export async function snsFanOutScenario(sns: SNSClient, sqs: SQSClient, suffix: string): Promise<void> {
  const all = await createQueue(sqs, `sns-all-${suffix}`)
  const red = await createQueue(sqs, `sns-red-${suffix}`)
  const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: `paint-${suffix}`, Tags: [{ Key: 'team', Value: 'paint' }] }))
  await sns.send(new SubscribeCommand({ TopicArn, Protocol: 'sqs', Endpoint: all.arn }))
  await sns.send(
    new SubscribeCommand({ TopicArn, Protocol: 'sqs', Endpoint: red.arn, Attributes: { RawMessageDelivery: 'true', FilterPolicy: JSON.stringify({ colour: ['red'] }) } }),
  )
  const colour = (c: string) => ({ colour: { DataType: 'String', StringValue: c } })
  const blue = await sns.send(new PublishCommand({ TopicArn, Message: 'blue paint', Subject: 'paint', MessageAttributes: colour('blue') }))
  await sns.send(new PublishCommand({ TopicArn, Message: 'red paint', MessageAttributes: colour('red') }))
  const batch = await sns.send(
    new PublishBatchCommand({
      TopicArn,
      PublishBatchRequestEntries: [
        { Id: 'r2', Message: 'red again', MessageAttributes: colour('red') },
        { Id: 'g1', Message: 'green', MessageAttributes: colour('green') },
      ],
    }),
  )
  expect(batch.Successful?.map((s) => s.Id)).toEqual(['r2', 'g1'])

  const everything = await receiveAll(sqs, all.url)
  const docs = everything.map((m) => JSON.parse(m.body))
  expect(docs.map((d) => d.Message).sort()).toEqual(['blue paint', 'green', 'red again', 'red paint'])
  const first = docs.find((d) => d.Message === 'blue paint')
  expect(first).toMatchObject({ Type: 'Notification', MessageId: blue.MessageId, TopicArn, Subject: 'paint', SignatureVersion: '1' })
  expect(first.MessageAttributes).toEqual({ colour: { Type: 'String', Value: 'blue' } })
  expect(first).not.toHaveProperty('Signature')

  // Raw delivery with a filter: only the red ones, as published, with their attributes.
  const onlyRed = await receiveAll(sqs, red.url)
  expect(onlyRed.map((m) => m.body).sort()).toEqual(['red again', 'red paint'])
  expect(onlyRed[0]?.attributes.colour).toMatchObject({ DataType: 'String', StringValue: 'red' })

  expect((await sns.send(new ListTopicsCommand({}))).Topics?.map((t) => t.TopicArn)).toContain(TopicArn)
  expect((await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn }))).Subscriptions?.map((s) => s.Endpoint).sort()).toEqual([all.arn, red.arn].sort())
  expect((await sns.send(new GetTopicAttributesCommand({ TopicArn }))).Attributes?.SubscriptionsConfirmed).toBe('2')
  await sns.send(new TagResourceCommand({ ResourceArn: TopicArn, Tags: [{ Key: 'env', Value: suffix }] }))
  expect((await sns.send(new ListTagsForResourceCommand({ ResourceArn: TopicArn }))).Tags).toEqual([
    { Key: 'env', Value: suffix },
    { Key: 'team', Value: 'paint' },
  ])
}

/** A FIFO topic into a FIFO queue: group order, and a repeated deduplication id delivered once. */
export async function snsFifoScenario(sns: SNSClient, sqs: SQSClient, suffix: string): Promise<void> {
  const queue = await createQueue(sqs, `sns-fifo-${suffix}.fifo`, { FifoQueue: 'true' })
  const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: `events-${suffix}.fifo`, Attributes: { FifoTopic: 'true' } }))
  await sns.send(new SubscribeCommand({ TopicArn, Protocol: 'sqs', Endpoint: queue.arn, Attributes: { RawMessageDelivery: 'true' } }))
  for (const [i, dedup] of [
    [1, 'a'],
    [2, 'b'],
    [2, 'b'],
    [3, 'c'],
  ] as const) {
    await sns.send(new PublishCommand({ TopicArn, Message: `event ${i}`, MessageGroupId: 'g', MessageDeduplicationId: dedup }))
  }
  const got = []
  for (let round = 0; round < 6 && got.length < 3; round++) got.push(...(await receiveAll(sqs, queue.url)))
  expect(got.map((m) => m.body)).toEqual(['event 1', 'event 2', 'event 3'])
}

/**
 * PublishBatch is all or nothing: when one copy cannot be stored (here a wrapped copy that outgrows
 * the broker's MAX_FRAME_BYTES, which the test sets to 64 KiB), no entry of the batch reaches any
 * queue. Then the error shapes: bad signature, unknown action, malformed body, missing topic.
 */
export async function snsAtomicityAndErrorsScenario(sns: SNSClient, sqs: SQSClient, base: string, suffix: string): Promise<void> {
  const raw = await createQueue(sqs, `sns-batch-raw-${suffix}`)
  const wrapped = await createQueue(sqs, `sns-batch-wrapped-${suffix}`)
  const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: `batch-${suffix}` }))
  await sns.send(new SubscribeCommand({ TopicArn, Protocol: 'sqs', Endpoint: raw.arn, Attributes: { RawMessageDelivery: 'true' } }))
  await sns.send(new SubscribeCommand({ TopicArn, Protocol: 'sqs', Endpoint: wrapped.arn }))
  const quotes = '"'.repeat(30_000)
  const failing = sns.send(new PublishBatchCommand({ TopicArn, PublishBatchRequestEntries: [{ Id: 'small', Message: 'small' }, { Id: 'quotes', Message: quotes }] }))
  await expect(failing).rejects.toMatchObject({ name: 'InvalidParameterException', $metadata: { httpStatusCode: 400 } })
  expect(await receiveAll(sqs, raw.url)).toEqual([])
  expect(await receiveAll(sqs, wrapped.url)).toEqual([])
  const ok = await sns.send(new PublishBatchCommand({ TopicArn, PublishBatchRequestEntries: [{ Id: 'small', Message: 'small' }, { Id: 'empty', Message: '' }] }))
  expect(ok.Failed?.map((f) => [f.Id, f.Code])).toEqual([['empty', 'InvalidParameter']])
  expect((await receiveAll(sqs, raw.url)).map((m) => m.body)).toEqual(['small'])
  expect((await receiveAll(sqs, wrapped.url)).map((m) => JSON.parse(m.body).Message)).toEqual(['small'])

  await expect(sns.send(new PublishCommand({ TopicArn: `${TopicArn}-missing`, Message: 'x' }))).rejects.toMatchObject({ name: 'NotFoundException', $metadata: { httpStatusCode: 404 } })
  const form = { 'content-type': 'application/x-www-form-urlencoded' }
  const sign = (body: string) => signedRequest({ url: `${base}/`, service: 'sns', body, headers: form, accessKeyId: SQS_KEY.accessKeyId, secret: SQS_KEY.secretAccessKey })
  const good = await sign('Action=ListTopics&Version=2010-03-31')
  const tampered = await fetch(good.url, { method: 'POST', headers: good.headers, body: 'Action=DeleteTopic&Version=2010-03-31' })
  expect(tampered.status).toBe(403)
  expect(await tampered.text()).toMatch(/<ErrorResponse><Error><Type>Sender<\/Type><Code>SignatureDoesNotMatch<\/Code>/)
  const unknown = await fetch(await sign('Action=CreatePlatformEndpoint&Version=2010-03-31'))
  expect(unknown.status).toBe(400)
  expect(await unknown.text()).toContain('<Code>InvalidAction</Code>')
  const malformed = await fetch(await sign(`Action=PublishBatch&TopicArn=${encodeURIComponent(TopicArn as string)}&PublishBatchRequestEntries.member.0.Id=a`))
  expect(malformed.status).toBe(400)
  expect(await malformed.text()).toContain('<Code>MalformedQueryString</Code>')
}
