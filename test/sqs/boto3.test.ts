// boto3 (pip) against the broker on Node: a shorter run over the JSON protocol and the Query
// protocol (test/sqs/boto3_sqs.py). Skipped with a printed notice where python3 or boto3 is missing.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import { available, boto3Module } from '../helpers/optional.js'
import { servedApp, type ServedApp } from '../helpers/served-app.js'
import { SQS_ENV, SQS_KEY } from './sqs-client.js'

const hasBoto3 = available(boto3Module, 'the boto3 SQS test (test/sqs/boto3.test.ts)')

describe.runIf(hasBoto3)('boto3 on Node', () => {
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

  it('sends, receives and deletes over the JSON protocol, and over the Query protocol as botocore signs it', async () => {
    const script = fileURLToPath(new URL('./boto3_sqs.py', import.meta.url))
    // Asynchronous, so the broker in this process keeps answering while the script runs.
    const child = spawn('python3', [script, app.base, SQS_KEY.accessKeyId, SQS_KEY.secretAccessKey])
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (out += d))
    const code = await new Promise<number | null>((done) => child.on('close', done))
    expect(out.trim(), out).toBe('OK')
    expect(code).toBe(0)
  }, 60_000)
})
