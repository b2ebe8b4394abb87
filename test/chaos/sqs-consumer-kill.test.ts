// Chaos: consumers built on the `sqs-consumer` package read a FIFO queue through the SQS endpoint
// while the broker is SIGKILLed twice and restarted. Producers retry a batch whose answer was lost
// with the same MessageDeduplicationIds, so a retry stores nothing twice. At the end every message
// was handled (no loss), and no message was handed to a handler again after its delete had
// succeeded (no duplicate; a redelivery after a delete that failed in the kill is expected and
// allowed, as SQS allows it), and the queue is empty. A delete the broker committed just before it
// was killed reaches the consumer as an error, as it can from SQS itself, so "deleted" counts the
// deletes the consumer saw succeed and the empty queue proves the rest were settled too.
// 10 000 messages in `npm run chaos`, 2 000 in `npm test`.
import { CreateQueueCommand, GetQueueAttributesCommand, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs'
import { Consumer } from 'sqs-consumer'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import { SQS_KEY } from '../sqs/sqs-client.js'
import { FULL, sleep, startBroker, type Broker } from './harness.js'

const MESSAGES = FULL ? 10_000 : 2_000
const GROUPS = 32
const CONSUMERS = 4
const KILLS = 2

let database: TestDatabase
let broker: Broker

beforeAll(async () => {
  database = await freshDatabase()
  broker = await startBroker(database.url, { AWS_ACCESS_KEYS: `${SQS_KEY.accessKeyId}:${SQS_KEY.secretAccessKey}::admin` })
})

afterAll(async () => {
  await broker?.stop()
  await database?.drop()
})

const client = () =>
  new SQSClient({ endpoint: broker.base, region: 'eu-west-3', credentials: SQS_KEY, maxAttempts: 1, requestHandler: { requestTimeout: 15_000 } as never })

it(`sqs-consumer loses and duplicates nothing across ${KILLS} SIGKILLs of the broker`, { timeout: FULL ? 600_000 : 240_000 }, async () => {
  const { QueueUrl } = await client().send(new CreateQueueCommand({ QueueName: 'chaos.fifo', Attributes: { FifoQueue: 'true', VisibilityTimeout: '5' } }))
  const handled = new Map<string, number>()
  const deletedAt = new Map<string, number>()
  const duplicates: string[] = []
  let deliveries = 0

  const producer = (async () => {
    for (let start = 0; start < MESSAGES; start += 10) {
      const entries = Array.from({ length: Math.min(10, MESSAGES - start) }, (_, i) => {
        const n = start + i
        return { Id: `e${i}`, MessageBody: `m${n}`, MessageGroupId: `g${n % GROUPS}`, MessageDeduplicationId: `d${n}` }
      })
      for (;;) {
        const sent = await client().send(new SendMessageBatchCommand({ QueueUrl, Entries: entries })).catch(() => null)
        if (sent && (sent.Failed ?? []).length === 0) break
        await sleep(200)
      }
    }
  })()

  const consumers = Array.from({ length: CONSUMERS }, () => {
    const consumer = Consumer.create({
      queueUrl: QueueUrl!,
      sqs: client(),
      batchSize: 10,
      waitTimeSeconds: 1,
      pollingWaitTimeMs: 0,
      authenticationErrorTimeout: 200,
      suppressFifoWarning: true,
      handleMessage: async (message) => {
        deliveries++
        const body = message.Body!
        if (deletedAt.has(body)) duplicates.push(body)
        handled.set(body, (handled.get(body) ?? 0) + 1)
        return message
      },
    })
    consumer.on('message_processed', (message) => deletedAt.set(message.Body!, Date.now()))
    consumer.on('error', () => {})
    consumer.on('processing_error', () => {})
    consumer.start()
    return consumer
  })

  for (let k = 0; k < KILLS; k++) {
    await sleep(FULL ? 4000 : 1500)
    await broker.kill()
    await sleep(300)
    await broker.restart()
  }
  await producer
  // Visible, in flight and delayed: what the queue still holds, as its attributes say.
  const left = async () => {
    const { Attributes: a } = await client().send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['All'] }))
    return Number(a!.ApproximateNumberOfMessages) + Number(a!.ApproximateNumberOfMessagesNotVisible) + Number(a!.ApproximateNumberOfMessagesDelayed)
  }
  const deadline = Date.now() + (FULL ? 300_000 : 150_000)
  while (Date.now() < deadline && (deletedAt.size < MESSAGES || handled.size < MESSAGES) && (handled.size < MESSAGES || (await left()) > 0)) await sleep(200)
  for (const consumer of consumers) consumer.stop()

  const lost = Array.from({ length: MESSAGES }, (_, n) => `m${n}`).filter((body) => !handled.has(body))
  const remaining = await left()
  console.log(`[sqs chaos] messages ${MESSAGES}, deliveries ${deliveries}, deletes seen to succeed ${deletedAt.size}, redelivered before delete ${deliveries - handled.size}, duplicates ${duplicates.length}, left in the queue ${remaining}`)
  expect(lost).toEqual([])
  expect(duplicates).toEqual([])
  expect(remaining).toBe(0)
})
