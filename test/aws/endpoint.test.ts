// The shared AWS endpoint with a toy service: protocol sniffing, both answer shapes, and AWS's
// error shapes for a bad signature, an unknown action, a malformed body and a refused role.
import { describe, expect, it } from 'vitest'
import { handleAwsRequest, type AwsService } from '../../src/aws/endpoint.js'
import { AwsError } from '../../src/aws/errors.js'
import { parseAccessKeys, type AccessKeys } from '../../src/aws/keys.js'
import { KEY, signedRequest } from './sign.js'

const service: AwsService<string> = {
  scope: 'sqs',
  targetPrefix: 'AmazonSQS',
  jsonNamespace: 'com.amazonaws.sqs',
  xmlNamespace: 'http://queue.amazonaws.com/doc/2012-11-05/',
  brokerError: (status, message) => new AwsError('Broker', message, status === 503 ? 503 : 400),
  requestShapes: { AttributeNames: { kind: 'list', query: 'AttributeName', flat: true } },
  actions: {
    Echo: {
      roles: ['read-only', 'read-write', 'admin'],
      responseShapes: { Names: { kind: 'list', query: 'Name', flat: true } },
      run: async (input, call) => ({ Names: input.AttributeNames, Tenant: call.context, Protocol: call.protocol }),
    },
    Refuse: {
      roles: ['admin'],
      run: async () => {
        throw new AwsError('AWS.SimpleQueueService.NonExistentQueue', 'The specified queue does not exist.', 400, 'QueueDoesNotExist')
      },
    },
  },
}

const keys = parseAccessKeys(`${KEY.accessKeyId}:${KEY.secret}::admin,AKIDREADER:${KEY.secret}::read-only`) as AccessKeys
const options = { services: [service], keys, maxBodyBytes: 4096, context: () => 'tenant-x', requestId: () => 'req-1' }

const json = (action: string, body: unknown, extra: Record<string, string> = {}) =>
  signedRequest({ url: 'http://localhost/', body: JSON.stringify(body), headers: { 'x-amz-target': `AmazonSQS.${action}`, 'content-type': 'application/x-amz-json-1.0', ...extra } })
const query = (form: string, extra: { accessKeyId?: string; contentType?: string } = {}) =>
  signedRequest({ url: 'http://localhost/000000000000/q1', body: form, accessKeyId: extra.accessKeyId, headers: { 'content-type': extra.contentType ?? 'application/x-www-form-urlencoded' } })

describe('the shared AWS endpoint', () => {
  it('answers the JSON protocol with the action result as JSON', async () => {
    const response = await handleAwsRequest(await json('Echo', { AttributeNames: ['A', 'B'] }), options)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('application/x-amz-json-1.0')
    expect(await response.json()).toEqual({ Names: ['A', 'B'], Tenant: 'tenant-x', Protocol: 'json' })
  })

  it('answers the Query protocol as XML, whatever the Content-Type says', async () => {
    const response = await handleAwsRequest(await query('Action=Echo&AttributeName.1=A&AttributeName.2=B', { contentType: 'application/json' }), options)
    expect(response.status).toBe(200)
    const xml = await response.text()
    expect(xml).toContain('<EchoResult><Name>A</Name><Name>B</Name><Tenant>tenant-x</Tenant><Protocol>query</Protocol></EchoResult>')
    expect(xml).toContain('<RequestId>req-1</RequestId>')
  })

  it('renders an action error in each protocol with its code and status', async () => {
    const j = await handleAwsRequest(await json('Refuse', {}), options)
    expect(j.status).toBe(400)
    expect(j.headers.get('x-amzn-query-error')).toBe('AWS.SimpleQueueService.NonExistentQueue;Sender')
    expect(await j.json()).toEqual({ __type: 'com.amazonaws.sqs#QueueDoesNotExist', message: 'The specified queue does not exist.' })
    const q = await handleAwsRequest(await query('Action=Refuse'), options)
    expect(q.status).toBe(400)
    expect(await q.text()).toContain('<Error><Type>Sender</Type><Code>AWS.SimpleQueueService.NonExistentQueue</Code><Message>The specified queue does not exist.</Message>')
  })

  it('refuses a bad signature with 403 in the request protocol', async () => {
    const good = await json('Echo', {})
    const bad = new Request(good.url, { method: 'POST', headers: good.headers, body: JSON.stringify({ AttributeNames: ['X'] }) })
    const response = await handleAwsRequest(bad, options)
    expect(response.status).toBe(403)
    expect((await response.json()).__type).toBe('com.amazonaws.sqs#SignatureDoesNotMatch')
    const good2 = await query('Action=Echo')
    const bad2 = new Request(good2.url, { method: 'POST', headers: good2.headers, body: 'Action=Refuse' })
    const r2 = await handleAwsRequest(bad2, options)
    expect(r2.status).toBe(403)
    expect(await r2.text()).toContain('<Code>SignatureDoesNotMatch</Code>')
  })

  it('refuses an unknown action as InvalidAction and a missing one as MissingAction', async () => {
    const j = await handleAwsRequest(await json('FlyToTheMoon', {}), options)
    expect(j.status).toBe(400)
    expect((await j.json()).__type).toBe('com.amazonaws.sqs#InvalidAction')
    const q = await handleAwsRequest(await query('Action=toString'), options)
    expect(q.status).toBe(400)
    expect(await q.text()).toContain('<Code>InvalidAction</Code>')
    const none = await handleAwsRequest(await query('QueueUrl=x'), options)
    expect(none.status).toBe(400)
    expect(await none.text()).toContain('<Code>MissingAction</Code>')
  })

  it('refuses a malformed body in AWS shape with a 400', async () => {
    const j = await handleAwsRequest(await signedRequest({ url: 'http://localhost/', body: '{"AttributeNames":', headers: { 'x-amz-target': 'AmazonSQS.Echo' } }), options)
    expect(j.status).toBe(400)
    expect((await j.json()).__type).toBe('com.amazonaws.sqs#SerializationException')
    const q = await handleAwsRequest(await query('Action=Echo&AttributeName=1&AttributeName.1=2'), options)
    expect(q.status).toBe(400)
    expect(await q.text()).toContain('<Code>MalformedQueryString</Code>')
  })

  it('refuses a key whose role the action does not accept, and a body over the limit', async () => {
    const r = await handleAwsRequest(await query('Action=Refuse', { accessKeyId: 'AKIDREADER' }), options)
    expect(r.status).toBe(403)
    expect(await r.text()).toContain('<Code>AccessDenied</Code>')
    const big = await handleAwsRequest(await query(`Action=Echo&Pad=${'x'.repeat(5000)}`), options)
    expect(big.status).toBe(413)
  })
})
