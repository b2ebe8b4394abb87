// The unmodified @aws-sdk/client-sqs against the real worker bundle in workerd: the same scenarios
// as on Node (test/sqs/sdk.test.ts). The SDK calls miniflare's own loopback listener, so the host
// it signs is the host the worker sees.
import { afterAll, beforeAll, describe, it } from 'vitest'
import { handBackRedriveScenario } from '../sqs/hand-back-scenario.js'
import { shortenVisibilityScenario } from '../sqs/shorten-visibility-scenario.js'
import { fifoDelayRedriveScenario, standardQueueScenario } from '../sqs/scenario.js'
import { SQS_ENV, sqsClient } from '../sqs/sqs-client.js'
import { startEdgeStack, type EdgeStack } from './edge-stack.js'

let stack: EdgeStack
let base: string

beforeAll(async () => {
  stack = await startEdgeStack()
  const worker = await stack.worker(SQS_ENV)
  base = (await worker.mf.ready).origin
}, 120_000)

afterAll(() => stack?.close())

describe('@aws-sdk/client-sqs against the Worker', () => {
  it('runs a standard queue end to end', async () => {
    await standardQueueScenario(sqsClient(base), 'edge')
  }, 60_000)

  it('keeps FIFO group order and deduplicates, delays per queue and per message, and redrives to a DLQ', async () => {
    await fifoDelayRedriveScenario(sqsClient(base), 'edge')
  }, 60_000)

  it('redrives a message a consumer always hands back after exactly maxReceiveCount receives', async () => {
    await handBackRedriveScenario(sqsClient(base), 'edge')
  }, 60_000)

  it('makes a message receivable again after a shortened visibility, not the original one', async () => {
    await shortenVisibilityScenario(sqsClient(base), 'edge')
  }, 60_000)
})
