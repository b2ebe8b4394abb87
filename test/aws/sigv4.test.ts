import { describe, expect, it } from 'vitest'
import { canonicalPath, constantTimeEqual, SignatureError, verifySigV4, type SignedRequest } from '../../src/aws/sigv4.js'
import { amzDate, KEY, signedRequest, type SignOptions } from './sign.js'

const lookup = (id: string) => (id === KEY.accessKeyId ? KEY : undefined)

async function asSigned(request: Request): Promise<SignedRequest> {
  return { method: request.method, url: new URL(request.url), headers: request.headers, body: new Uint8Array(await request.arrayBuffer()) }
}

async function verify(o: SignOptions, now = Date.now(), services = ['sqs', 'sns']) {
  return verifySigV4(await asSigned(await signedRequest(o)), lookup, services, now)
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (error) {
    if (error instanceof SignatureError) return error.code
    throw error
  }
  return 'accepted'
}

const body = 'Action=ListQueues&Version=2012-11-05'
const form = { 'content-type': 'application/x-www-form-urlencoded' }

describe('SigV4 verification', () => {
  it('accepts a header-signed request in any region and reports the key, region and service', async () => {
    const verified = await verify({ url: 'http://localhost:6632/', body, headers: form, region: 'ap-south-2' })
    expect(verified).toEqual({ accessKeyId: KEY.accessKeyId, region: 'ap-south-2', service: 'sqs' })
  })

  it('accepts a request signed on a queue URL path', async () => {
    const verified = await verify({ url: 'http://localhost:6632/000000000000/orders-1', body, headers: form })
    expect(verified.service).toBe('sqs')
  })

  it('accepts a presigned GET, and refuses it once X-Amz-Expires has passed', async () => {
    const now = Date.now()
    const url = 'http://localhost:6632/?Action=ListQueues&X-Amz-Expires=60'
    expect((await verify({ method: 'GET', url, presign: true, datetime: amzDate(now) }, now)).service).toBe('sqs')
    expect(await refusal(verify({ method: 'GET', url, presign: true, datetime: amzDate(now) }, now + 61_000))).toBe('RequestExpired')
  })

  it('refuses a changed body, a changed query and a wrong secret as SignatureDoesNotMatch', async () => {
    const request = await signedRequest({ url: 'http://localhost:6632/', body, headers: form })
    const tampered = new Request(request.url, { method: 'POST', headers: request.headers, body: body.replace('ListQueues', 'PurgeQueue') })
    expect(await refusal(verifySigV4(await asSigned(tampered), lookup, ['sqs']))).toBe('SignatureDoesNotMatch')
    const presigned = await signedRequest({ method: 'GET', url: 'http://localhost:6632/?Action=ListQueues&X-Amz-Expires=60', presign: true })
    const moved = new Request(presigned.url.replace('ListQueues', 'PurgeQueue'), { headers: presigned.headers })
    expect(await refusal(verifySigV4(await asSigned(moved), lookup, ['sqs']))).toBe('SignatureDoesNotMatch')
    expect(await refusal(verify({ url: 'http://localhost:6632/', body, headers: form, secret: 'another-secret-0123456789' }))).toBe('SignatureDoesNotMatch')
  })

  it('refuses an unknown access key as InvalidClientTokenId and an unsigned request as MissingAuthenticationToken', async () => {
    expect(await refusal(verify({ url: 'http://localhost:6632/', body, accessKeyId: 'AKIDNOBODY' }))).toBe('InvalidClientTokenId')
    const unsigned = new Request('http://localhost:6632/', { method: 'POST', body })
    expect(await refusal(verifySigV4(await asSigned(unsigned), lookup, ['sqs']))).toBe('MissingAuthenticationToken')
  })

  it('allows 15 minutes of clock skew either way and no more', async () => {
    const signedAt = Date.parse('2026-12-07T00:00:00Z')
    const o = { url: 'http://localhost:6632/', body, headers: form, datetime: amzDate(signedAt) }
    expect((await verify(o, signedAt + 14 * 60_000)).service).toBe('sqs')
    expect((await verify(o, signedAt - 14 * 60_000)).service).toBe('sqs')
    expect(await refusal(verify(o, signedAt + 16 * 60_000))).toBe('SignatureDoesNotMatch')
    expect(await refusal(verify(o, signedAt - 16 * 60_000))).toBe('SignatureDoesNotMatch')
  })

  it('accepts only the services the caller names in the credential scope', async () => {
    expect((await verify({ url: 'http://localhost:6632/', body, service: 'sns' })).service).toBe('sns')
    expect(await refusal(verify({ url: 'http://localhost:6632/', body, service: 'sns' }, Date.now(), ['sqs']))).toBe('SignatureDoesNotMatch')
    expect(await refusal(verify({ url: 'http://localhost:6632/', body, service: 's3' }))).toBe('SignatureDoesNotMatch')
  })
})

describe('SigV4 helpers', () => {
  it('compares equal and unequal strings, including different lengths', () => {
    expect(constantTimeEqual('abc', 'abc')).toBe(true)
    expect(constantTimeEqual('abc', 'abd')).toBe(false)
    expect(constantTimeEqual('abc', 'abcd')).toBe(false)
    expect(constantTimeEqual('', '')).toBe(true)
  })

  it('escapes the already-escaped path once more and resolves dot segments', () => {
    expect(canonicalPath('/')).toBe('/')
    expect(canonicalPath('/000000000000/my-queue.fifo')).toBe('/000000000000/my-queue.fifo')
    expect(canonicalPath('/a/./b/../c%20d')).toBe('/a/c%2520d')
  })
})
