// The SQS endpoint over real HTTP: the width bound on in-flight messages (the figure docs/sqs.md
// quotes), the Query protocol through a signed form, AWS's error shapes, and the endpoint's absence
// without keys.
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import { servedApp, type ServedApp } from '../helpers/served-app.js'
import { signedRequest } from '../aws/sign.js'
import { SQS_ENV, SQS_KEY, sqsClient } from './sqs-client.js'

let database: TestDatabase
let app: ServedApp
let sqs: SQSClient

beforeAll(async () => {
  database = await freshDatabase()
  app = await servedApp(database, SQS_ENV)
  sqs = sqsClient(app.base)
})

afterAll(async () => {
  await app?.close()
  await database?.drop()
})

const signed = (body: string, headers: Record<string, string>, secret = SQS_KEY.secretAccessKey) =>
  signedRequest({ url: `${app.base}/`, body, headers, accessKeyId: SQS_KEY.accessKeyId, secret }).then((r) => fetch(r))

describe('the SQS endpoint over HTTP', () => {
  it('bounds in-flight messages by the width: 1 at width 1, 8 at width 8, 10 at width 64', async () => {
    const inFlight = async (width: number) => {
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `width-${width}`, Attributes: { 'queen.partitions': String(width) } as Record<string, string> }))
      await sqs.send(new SendMessageBatchCommand({ QueueUrl, Entries: Array.from({ length: 10 }, (_, i) => ({ Id: `e${i}`, MessageBody: `m${i}` })) }))
      let n = 0
      for (let round = 0; round < 3; round++) n += (await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10 }))).Messages?.length ?? 0
      return n
    }
    expect(await inFlight(1)).toBe(1)
    expect(await inFlight(8)).toBe(8)
    expect(await inFlight(64)).toBe(10)
  })

  it('answers the Query protocol in XML, on a queue URL too', async () => {
    const created = await signed('Action=CreateQueue&Version=2012-11-05&QueueName=query-q&Attribute.1.Name=DelaySeconds&Attribute.1.Value=0', { 'content-type': 'application/x-www-form-urlencoded' })
    expect(created.status).toBe(200)
    const xml = await created.text()
    expect(xml).toContain(`<CreateQueueResult><QueueUrl>${app.base}/000000000000/query-q</QueueUrl></CreateQueueResult>`)
    const url = `${app.base}/000000000000/query-q`
    const send = await fetch(await signedRequest({ url, body: 'Action=SendMessage&MessageBody=hi&MessageAttribute.1.Name=a&MessageAttribute.1.Value.DataType=String&MessageAttribute.1.Value.StringValue=x', headers: { 'content-type': 'application/x-www-form-urlencoded' }, accessKeyId: SQS_KEY.accessKeyId, secret: SQS_KEY.secretAccessKey }))
    const sent = await send.text()
    expect(sent).toContain('<MD5OfMessageBody>49f68a5c8493ec2c0bf489821c21fc3b</MD5OfMessageBody>')
    const receive = await fetch(await signedRequest({ url, body: 'Action=ReceiveMessage&MessageAttributeName.1=All&AttributeName.1=All', headers: { 'content-type': 'application/x-www-form-urlencoded' }, accessKeyId: SQS_KEY.accessKeyId, secret: SQS_KEY.secretAccessKey }))
    const got = await receive.text()
    expect(got).toContain('<Body>hi</Body>')
    expect(got).toContain('<MessageAttribute><Name>a</Name><Value><DataType>String</DataType><StringValue>x</StringValue></Value></MessageAttribute>')
    expect(got).toContain('<Attribute><Name>ApproximateReceiveCount</Name><Value>1</Value></Attribute>')
  })

  it('answers a bad signature, an unknown action and a malformed body in AWS shape with a 4xx', async () => {
    const json = { 'content-type': 'application/x-amz-json-1.0' }
    const bad = await signed('{}', { ...json, 'x-amz-target': 'AmazonSQS.ListQueues' }, 'not-the-secret-0123456789')
    expect(bad.status).toBe(403)
    expect(bad.headers.get('x-amzn-query-error')).toBe('SignatureDoesNotMatch;Sender')
    expect(await bad.json()).toMatchObject({ __type: 'com.amazonaws.sqs#SignatureDoesNotMatch' })
    const unknown = await signed('{}', { ...json, 'x-amz-target': 'AmazonSQS.LaunchRocket' })
    expect(unknown.status).toBe(400)
    expect(await unknown.json()).toMatchObject({ __type: 'com.amazonaws.sqs#InvalidAction' })
    const malformed = await signed('{"QueueName": ', { ...json, 'x-amz-target': 'AmazonSQS.CreateQueue' })
    expect(malformed.status).toBe(400)
    expect(await malformed.json()).toMatchObject({ __type: 'com.amazonaws.sqs#SerializationException' })
    const form = await signed('Action=ListQueues&MaxResults=many', { 'content-type': 'application/x-www-form-urlencoded' })
    expect(form.status).toBe(400)
    expect(await form.text()).toContain('<Code>InvalidParameterValue</Code>')
  })

  it('is absent without AWS_ACCESS_KEYS: POST / is the broker’s 405, GET / the console', async () => {
    const plain = await servedApp(database, {})
    try {
      expect((await fetch(`${plain.base}/`, { method: 'POST', body: 'Action=ListQueues' })).status).toBe(405)
      expect((await fetch(`${plain.base}/`)).status).toBe(200)
      expect((await fetch(`${app.base}/`)).headers.get('content-type')).toContain('text/html')
    } finally {
      await plain.close()
    }
  })
})
