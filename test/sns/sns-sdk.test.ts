// The unmodified @aws-sdk/client-sns against the SNS service on the shared AWS endpoint, over a real
// socket and a real database. The queues a subscription delivers to are the engine's own queues
// here, reached through a minimal SnsQueues that pushes the delivery as it is, so this file checks
// the SNS half alone: topics, subscriptions, filters, raw delivery, batch atomicity, tags, errors.
import { serve } from '@hono/node-server'
import {
  ConfirmSubscriptionCommand,
  CreateTopicCommand,
  DeleteTopicCommand,
  GetSubscriptionAttributesCommand,
  GetTopicAttributesCommand,
  ListSubscriptionsByTopicCommand,
  ListSubscriptionsCommand,
  ListTagsForResourceCommand,
  ListTopicsCommand,
  PublishBatchCommand,
  PublishCommand,
  SetSubscriptionAttributesCommand,
  SetTopicAttributesCommand,
  SNSClient,
  SubscribeCommand,
  TagResourceCommand,
  UnsubscribeCommand,
  UntagResourceCommand,
} from '@aws-sdk/client-sns'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { handleAwsRequest } from '../../src/aws/endpoint.js'
import { AwsError } from '../../src/aws/errors.js'
import { parseAccessKeys, type AccessKeys } from '../../src/aws/keys.js'
import { tenantDatabase } from '../../src/db/tenant-database.js'
import type { SnsHost, SnsQueues } from '../../src/sns/host.js'
import { snsService } from '../../src/sns/service.js'
import { KEY, signedRequest } from '../aws/sign.js'
import { testApp, type TestApp } from '../helpers/app.js'
import { available, boto3Module } from '../helpers/optional.js'

const hasBoto3 = available(boto3Module, "the boto3 SNS script (test/sns/sns-sdk.test.ts)")

const ACCOUNT = '000000000000'
const queueArn = (name: string) => `arn:aws:sqs:us-east-1:${ACCOUNT}:${name}`

let app: TestApp
let server: ReturnType<typeof serve>
let sns: SNSClient
let endpoint: string
/** The engine queues this file configured, standing for the SQS queues a topic may deliver to. */
const configured = new Map<string, { fifo: boolean }>()
/** Queues whose push cannot be built, to show a fan-out stores nothing until every copy is ready. */
const refusing = new Set<string>()

const queues: SnsQueues = {
  async find(arn) {
    return configured.get(arn.split(':').at(-1) ?? '') ?? null
  },
  async deliver(copies) {
    const ops = copies.map(({ queueArn: arn, delivery }) => {
      const queue = arn.split(':').at(-1) ?? ''
      if (refusing.has(queue)) throw new AwsError('InvalidParameter', `queue ${queue} refuses deliveries`, 400)
      const item = { index: 0, queue, partition: delivery.groupId ?? 'Default', data: delivery, ...(delivery.deduplicationId ? { transactionId: delivery.deduplicationId } : {}) }
      return { type: 'push' as const, items: [item] }
    })
    const result = await tenantDatabase(app.db, '').call('log_transaction_v1', { ops, requiredLeases: [] })
    expect(result.success).toBe(true)
  },
}

async function configure(name: string, fifo = false) {
  const res = await app.json('POST', '/api/v1/configure', { queue: name })
  expect(res.status).toBe(200)
  configured.set(name, { fifo })
}

/** Everything the queue holds, in order (a fresh consumer group reads from the start). */
async function drain(queue: string): Promise<any[]> {
  const res = await app.json('GET', `/api/v1/pop/queue/${queue}?consumerGroup=g${Math.random().toString(36).slice(2)}&subscriptionMode=all&batch=100`)
  return (res.body?.messages ?? []).map((m: any) => m.data)
}

beforeAll(async () => {
  app = await testApp()
  const keys = parseAccessKeys(`${KEY.accessKeyId}:${KEY.secret}::admin,AKIDREADER:${KEY.secret}::read-only`) as AccessKeys
  const db = tenantDatabase(app.db, '')
  const service = snsService<SnsHost>((call) => call.context)
  server = await new Promise((ready) => {
    const s = serve(
      {
        fetch: (request: Request) =>
          handleAwsRequest(request, { services: [service], keys, maxBodyBytes: 1 << 20, context: () => ({ db, account: ACCOUNT, queues }), requestId: () => crypto.randomUUID() }),
        port: 0,
        hostname: '127.0.0.1',
      },
      () => ready(s),
    )
  })
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  sns = new SNSClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: KEY.accessKeyId, secretAccessKey: KEY.secret } })
})

afterAll(async () => {
  sns?.destroy()
  await new Promise<void>((done) => server.close(() => done()))
  await app.close()
})

describe('SNS through @aws-sdk/client-sns', () => {
  it('fans out to two queues, one with a filter policy that lets only matching messages in', async () => {
    await configure('all-orders')
    await configure('big-orders')
    const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'orders' }))
    expect(TopicArn).toBe(`arn:aws:sns:us-east-1:${ACCOUNT}:orders`)
    await sns.send(new SubscribeCommand({ TopicArn, Protocol: 'sqs', Endpoint: queueArn('all-orders') }))
    await sns.send(
      new SubscribeCommand({
        TopicArn,
        Protocol: 'sqs',
        Endpoint: queueArn('big-orders'),
        Attributes: { FilterPolicy: JSON.stringify({ size: ['big'], total: [{ numeric: ['>=', 100] }] }) },
      }),
    )
    const attrs = (size: string, total: number) => ({
      size: { DataType: 'String', StringValue: size },
      total: { DataType: 'Number', StringValue: String(total) },
    })
    const small = await sns.send(new PublishCommand({ TopicArn, Message: 'small one', Subject: 'hi', MessageAttributes: attrs('small', 5) }))
    const big = await sns.send(new PublishCommand({ TopicArn, Message: 'big one', MessageAttributes: attrs('big', 150) }))
    expect(small.MessageId).toMatch(/^[0-9a-f-]{36}$/)

    const all = await drain('all-orders')
    expect(all.map((d) => JSON.parse(d.body).Message)).toEqual(['small one', 'big one'])
    const doc = JSON.parse(all[0].body)
    expect(doc).toMatchObject({ Type: 'Notification', MessageId: small.MessageId, TopicArn, Subject: 'hi', Message: 'small one', SignatureVersion: '1' })
    expect(doc.MessageAttributes.size).toEqual({ Type: 'String', Value: 'small' })
    const filtered = await drain('big-orders')
    expect(filtered.map((d) => JSON.parse(d.body).MessageId)).toEqual([big.MessageId])
  })

  it('raw delivery hands the queue the message as published, its attributes as message attributes', async () => {
    await configure('raw')
    const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'raw-topic' }))
    const { SubscriptionArn } = await sns.send(new SubscribeCommand({ TopicArn, Protocol: 'sqs', Endpoint: queueArn('raw'), Attributes: { RawMessageDelivery: 'true' } }))
    const got = await sns.send(new GetSubscriptionAttributesCommand({ SubscriptionArn }))
    expect(got.Attributes).toMatchObject({ RawMessageDelivery: 'true', Protocol: 'sqs', Endpoint: queueArn('raw'), PendingConfirmation: 'false' })
    expect(got.Attributes).not.toHaveProperty('FilterPolicyScope')
    await sns.send(new PublishCommand({ TopicArn, Message: '{"exact": "bytes" }', MessageAttributes: { k: { DataType: 'Binary', BinaryValue: Uint8Array.of(1, 2, 3) } } }))
    const [d] = await drain('raw')
    expect(d.body).toBe('{"exact": "bytes" }')
    expect(d.attributes).toEqual({ k: { DataType: 'Binary', BinaryValue: 'AQID' } })
  })

  it('PublishBatch stores every accepted entry in one transaction and reports refused entries', async () => {
    await configure('batch')
    const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'batch-topic' }))
    await sns.send(new SubscribeCommand({ TopicArn, Protocol: 'sqs', Endpoint: queueArn('batch'), Attributes: { RawMessageDelivery: 'true' } }))
    const answer = await sns.send(
      new PublishBatchCommand({
        TopicArn,
        PublishBatchRequestEntries: [
          { Id: 'a', Message: 'one' },
          { Id: 'b', Message: '' },
          { Id: 'c', Message: 'three' },
        ],
      }),
    )
    expect(answer.Successful?.map((s) => s.Id)).toEqual(['a', 'c'])
    expect(answer.Failed).toEqual([{ Id: 'b', Code: 'InvalidParameter', Message: 'Invalid parameter: Empty message', SenderFault: true }])
    expect((await drain('batch')).map((d) => d.body)).toEqual(['one', 'three'])

    // One copy that cannot be stored fails the whole call: no other queue got any entry of it.
    await configure('batch-2')
    await sns.send(new SubscribeCommand({ TopicArn, Protocol: 'sqs', Endpoint: queueArn('batch-2'), Attributes: { RawMessageDelivery: 'true' } }))
    refusing.add('batch-2')
    const failed = sns.send(new PublishBatchCommand({ TopicArn, PublishBatchRequestEntries: [{ Id: 'x', Message: 'four' }, { Id: 'y', Message: 'five' }] }))
    await expect(failed).rejects.toMatchObject({ name: 'InvalidParameterException', $metadata: { httpStatusCode: 400 } })
    expect((await drain('batch')).map((d) => d.body)).toEqual(['one', 'three'])
    refusing.delete('batch-2')
    await sns.send(new PublishBatchCommand({ TopicArn, PublishBatchRequestEntries: [{ Id: 'x', Message: 'four' }] }))
    expect((await drain('batch')).map((d) => d.body)).toEqual(['one', 'three', 'four'])
    expect((await drain('batch-2')).map((d) => d.body)).toEqual(['four'])
  })

  it('lists topics and subscriptions, and reads and sets attributes', async () => {
    const topics = (await sns.send(new ListTopicsCommand({}))).Topics?.map((t) => t.TopicArn?.split(':').at(-1))
    expect(topics).toEqual(expect.arrayContaining(['orders', 'raw-topic', 'batch-topic']))
    const TopicArn = `arn:aws:sns:us-east-1:${ACCOUNT}:orders`
    const byTopic = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn }))
    expect(byTopic.Subscriptions?.map((s) => s.Endpoint).sort()).toEqual([queueArn('all-orders'), queueArn('big-orders')])
    expect((await sns.send(new ListSubscriptionsCommand({}))).Subscriptions!.length).toBeGreaterThanOrEqual(4)

    await sns.send(new SetTopicAttributesCommand({ TopicArn, AttributeName: 'DisplayName', AttributeValue: 'Orders' }))
    const t = await sns.send(new GetTopicAttributesCommand({ TopicArn }))
    expect(t.Attributes).toMatchObject({ TopicArn, DisplayName: 'Orders', SubscriptionsConfirmed: '2', SubscriptionsPending: '0', Owner: ACCOUNT })

    const SubscriptionArn = byTopic.Subscriptions!.find((s) => s.Endpoint === queueArn('big-orders'))!.SubscriptionArn
    await sns.send(new SetSubscriptionAttributesCommand({ SubscriptionArn, AttributeName: 'FilterPolicyScope', AttributeValue: 'MessageBody' }))
    expect((await sns.send(new GetSubscriptionAttributesCommand({ SubscriptionArn }))).Attributes?.FilterPolicyScope).toBe('MessageBody')
    const bad = sns.send(new SetSubscriptionAttributesCommand({ SubscriptionArn, AttributeName: 'FilterPolicy', AttributeValue: '{"a": [{"wildcard": "x*"}]}' }))
    await expect(bad).rejects.toMatchObject({ name: 'InvalidParameterException', $metadata: { httpStatusCode: 400 } })
    await sns.send(new UnsubscribeCommand({ SubscriptionArn }))
    expect((await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn }))).Subscriptions).toHaveLength(1)
  })

  it('tags a topic, lists and removes tags, and answers ResourceNotFound for a missing one', async () => {
    const ResourceArn = `arn:aws:sns:us-east-1:${ACCOUNT}:orders`
    await sns.send(new TagResourceCommand({ ResourceArn, Tags: [{ Key: 'team', Value: 'billing' }, { Key: 'env', Value: 'test' }] }))
    await sns.send(new UntagResourceCommand({ ResourceArn, TagKeys: ['env'] }))
    expect((await sns.send(new ListTagsForResourceCommand({ ResourceArn }))).Tags).toEqual([{ Key: 'team', Value: 'billing' }])
    const missing = sns.send(new ListTagsForResourceCommand({ ResourceArn: `arn:aws:sns:us-east-1:${ACCOUNT}:nope` }))
    await expect(missing).rejects.toMatchObject({ name: 'ResourceNotFoundException', $metadata: { httpStatusCode: 404 } })
  })

  it('answers SNS error names: NotFound 404, refused protocols, ConfirmSubscription, FIFO rules', async () => {
    const nope = sns.send(new PublishCommand({ TopicArn: `arn:aws:sns:us-east-1:${ACCOUNT}:nope`, Message: 'x' }))
    await expect(nope).rejects.toMatchObject({ name: 'NotFoundException', $metadata: { httpStatusCode: 404 } })
    const TopicArn = `arn:aws:sns:us-east-1:${ACCOUNT}:orders`
    const http = sns.send(new SubscribeCommand({ TopicArn, Protocol: 'https', Endpoint: 'https://example.com/hook' }))
    await expect(http).rejects.toThrow(/https subscriptions are not supported here; only sqs is/)
    const confirm = sns.send(new ConfirmSubscriptionCommand({ TopicArn, Token: 'anything' }))
    await expect(confirm).rejects.toMatchObject({ name: 'InvalidParameterException', message: 'Invalid parameter: Token' })
    const ghost = sns.send(new SubscribeCommand({ TopicArn, Protocol: 'sqs', Endpoint: queueArn('ghost') }))
    await expect(ghost).rejects.toThrow(/the queue does not exist/)

    await configure('events.fifo', true)
    const fifo = await sns.send(new CreateTopicCommand({ Name: 'events.fifo', Attributes: { FifoTopic: 'true', ContentBasedDeduplication: 'true' } }))
    await sns.send(new SubscribeCommand({ TopicArn: fifo.TopicArn, Protocol: 'sqs', Endpoint: queueArn('events.fifo'), Attributes: { RawMessageDelivery: 'true' } }))
    const noGroup = sns.send(new PublishCommand({ TopicArn: fifo.TopicArn, Message: 'x' }))
    await expect(noGroup).rejects.toThrow(/MessageGroupId parameter is required/)
    await sns.send(new PublishCommand({ TopicArn: fifo.TopicArn, Message: 'same', MessageGroupId: 'g1' }))
    await sns.send(new PublishCommand({ TopicArn: fifo.TopicArn, Message: 'same', MessageGroupId: 'g1' }))
    const delivered = await drain('events.fifo')
    expect(delivered).toHaveLength(1)
    expect(delivered[0]).toMatchObject({ body: 'same', groupId: 'g1' })
    const mismatch = sns.send(new CreateTopicCommand({ Name: 'plain.fifo' }))
    await expect(mismatch).rejects.toMatchObject({ name: 'InvalidParameterException' })
    const stdToFifo = sns.send(new SubscribeCommand({ TopicArn, Protocol: 'sqs', Endpoint: queueArn('events.fifo') }))
    await expect(stdToFifo).rejects.toThrow(/standard topic can not deliver to a FIFO queue/)
  })

  it('a read-only key may list but not create, and deleting a topic removes its subscriptions', async () => {
    const reader = new SNSClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'AKIDREADER', secretAccessKey: KEY.secret } })
    await expect(reader.send(new ListTopicsCommand({}))).resolves.toBeDefined()
    await expect(reader.send(new CreateTopicCommand({ Name: 'x' }))).rejects.toMatchObject({ $metadata: { httpStatusCode: 403 } })
    reader.destroy()
    const TopicArn = `arn:aws:sns:us-east-1:${ACCOUNT}:orders`
    await sns.send(new DeleteTopicCommand({ TopicArn }))
    await sns.send(new DeleteTopicCommand({ TopicArn }))
    await expect(sns.send(new ListSubscriptionsByTopicCommand({ TopicArn }))).rejects.toMatchObject({ name: 'NotFoundException' })
  })

  it('a bad signature, an unknown action and a malformed body get the Query error shape and a 4xx', async () => {
    const good = await signedRequest({ url: `${endpoint}/`, service: 'sns', body: 'Action=ListTopics&Version=2010-03-31', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    const tampered = await fetch(good.url, { method: 'POST', headers: good.headers, body: 'Action=DeleteTopic&Version=2010-03-31' })
    expect(tampered.status).toBe(403)
    expect(await tampered.text()).toMatch(/<ErrorResponse><Error><Type>Sender<\/Type><Code>SignatureDoesNotMatch<\/Code>/)
    const unknown = await signedRequest({ url: `${endpoint}/`, service: 'sns', body: 'Action=CreatePlatformApplication&Version=2010-03-31', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    const u = await fetch(unknown)
    expect(u.status).toBe(400)
    expect(await u.text()).toContain('<Code>InvalidAction</Code>')
    const malformed = await signedRequest({ url: `${endpoint}/`, service: 'sns', body: 'Action=PublishBatch&TopicArn=x&PublishBatchRequestEntries.member.0.Id=a', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    const m = await fetch(malformed)
    expect(m.status).toBe(400)
    expect(await m.text()).toContain('<Code>MalformedQueryString</Code>')
  })
})

describe.skipIf(!hasBoto3)('SNS through boto3 (Query protocol)', () => {
  it('creates, subscribes with a filter, publishes and batch-publishes, lists and reads errors as boto3 exceptions', async () => {
    await configure('boto3-queue')
    // Asynchronously: the broker answering the script runs in this process.
    const run = await promisify(execFile)('python3', ['test/sns/boto3_sns.py', endpoint, KEY.accessKeyId, KEY.secret, queueArn('boto3-queue')], { timeout: 60_000 })
    expect(run.stderr).toBe('')
    const seen = JSON.parse(run.stdout)
    expect(seen.topics).toContain(`arn:aws:sns:us-east-1:${ACCOUNT}:boto3-topic`)
    expect(seen.subscription).toMatchObject({ RawMessageDelivery: 'true', FilterPolicyScope: 'MessageAttributes', Protocol: 'sqs' })
    expect(seen.tags).toEqual([{ Key: 'made-by', Value: 'boto3' }])
    expect(seen.batch).toEqual(['one', 'two'])
    expect(seen.errors.missing).toEqual(['NotFound', 404])
    expect(seen.errors.email).toBe('InvalidParameter')
    expect(seen.errors.nested).toMatch(/does not support nested filter policy/)
    expect((await drain('boto3-queue')).map((d) => d.body)).toEqual(['from boto3', 'batch one'])
  })
})
