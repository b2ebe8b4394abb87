// SNS publishing into SQS queues on Node: the unmodified @aws-sdk/client-sns and client-sqs against
// the broker's AWS endpoint, served over a socket.
import { SNSClient } from '@aws-sdk/client-sns'
import { afterAll, beforeAll, describe, it } from 'vitest'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import { servedApp, type ServedApp } from '../helpers/served-app.js'
import { SQS_ENV, SQS_KEY, sqsClient } from '../sqs/sqs-client.js'
import { snsAtomicityAndErrorsScenario, snsFanOutScenario, snsFifoScenario } from './scenario.js'

let database: TestDatabase
let app: ServedApp

beforeAll(async () => {
  database = await freshDatabase()
  app = await servedApp(database, { ...SQS_ENV, MAX_FRAME_BYTES: String(64 * 1024) })
})

afterAll(async () => {
  await app?.close()
  await database?.drop()
})

const snsClient = (base: string) => new SNSClient({ endpoint: base, region: 'eu-west-3', credentials: SQS_KEY, maxAttempts: 1 })

describe('SNS into SQS on Node', () => {
  it('fans out to two queues, one filtered and raw, and lists, reads and tags', async () => {
    await snsFanOutScenario(snsClient(app.base), sqsClient(app.base), 'node')
  })

  it('a FIFO topic keeps group order and delivers a repeated deduplication id once', async () => {
    await snsFifoScenario(snsClient(app.base), sqsClient(app.base), 'node')
  })

  it('PublishBatch stores all of its copies or none, and errors come in AWS shape with a 4xx', async () => {
    await snsAtomicityAndErrorsScenario(snsClient(app.base), sqsClient(app.base), app.base, 'node')
  })
})
