// SNS publishing into SQS queues inside workerd: the same scenarios as test/sns/sns-sqs.test.ts,
// with the unmodified @aws-sdk/client-sns and client-sqs talking to the Worker over HTTP.
import { SNSClient } from '@aws-sdk/client-sns'
import { afterAll, beforeAll, describe, it } from 'vitest'
import { snsAtomicityAndErrorsScenario, snsFanOutScenario, snsFifoScenario } from '../sns/scenario.js'
import { SQS_ENV, SQS_KEY, sqsClient } from '../sqs/sqs-client.js'
import { startEdgeStack, type EdgeStack } from './edge-stack.js'

let stack: EdgeStack
let base: string

beforeAll(async () => {
  stack = await startEdgeStack()
  const worker = await stack.worker({ ...SQS_ENV, MAX_FRAME_BYTES: String(64 * 1024) })
  // Miniflare serves the worker on a local port: the SDKs reach it as they would any endpoint.
  base = (await worker.mf.ready).toString().replace(/\/$/, '')
})

afterAll(async () => {
  await stack?.close()
})

const snsClient = () => new SNSClient({ endpoint: base, region: 'eu-west-3', credentials: SQS_KEY, maxAttempts: 1 })

describe('SNS into SQS on the Worker', () => {
  it('fans out to two queues, one filtered and raw, and lists, reads and tags', async () => {
    await snsFanOutScenario(snsClient(), sqsClient(base), 'edge')
  })

  it('a FIFO topic keeps group order and delivers a repeated deduplication id once', async () => {
    await snsFifoScenario(snsClient(), sqsClient(base), 'edge')
  })

  it('PublishBatch stores all of its copies or none, and errors come in AWS shape with a 4xx', async () => {
    await snsAtomicityAndErrorsScenario(snsClient(), sqsClient(base), base, 'edge')
  })
})
