// The unmodified @aws-sdk/client-sqs against the broker on Node.
import { afterAll, beforeAll, describe, it } from 'vitest'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import { servedApp, type ServedApp } from '../helpers/served-app.js'
import { handBackRedriveScenario } from './hand-back-scenario.js'
import { shortenVisibilityScenario } from './shorten-visibility-scenario.js'
import { fifoDelayRedriveScenario, standardQueueScenario } from './scenario.js'
import { SQS_ENV, sqsClient } from './sqs-client.js'

let database: TestDatabase
let app: ServedApp

beforeAll(async () => {
  database = await freshDatabase()
  app = await servedApp(database, SQS_ENV)
})

afterAll(async () => {
  await app?.close()
  await database?.drop()
})

describe('@aws-sdk/client-sqs on Node', () => {
  it('runs a standard queue end to end', async () => {
    await standardQueueScenario(sqsClient(app.base), 'node')
  })

  it('keeps FIFO group order and deduplicates, delays per queue and per message, and redrives to a DLQ', async () => {
    await fifoDelayRedriveScenario(sqsClient(app.base), 'node')
  })

  it('redrives a message a consumer always hands back after exactly maxReceiveCount receives', async () => {
    await handBackRedriveScenario(sqsClient(app.base), 'node')
  })

  it('makes a message receivable again after a shortened visibility, not the original one', async () => {
    await shortenVisibilityScenario(sqsClient(app.base), 'node')
  })
})
