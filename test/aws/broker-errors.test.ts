// Each AWS service names the broker's own failures in its own words: SDKs choose the exception class
// from the code, so SNS's throttle must read `Throttled`, not SQS's `RequestThrottled`.
import { describe, expect, it } from 'vitest'
import { handleAwsRequest, type AwsService } from '../../src/aws/endpoint.js'
import { parseAccessKeys, type AccessKeys } from '../../src/aws/keys.js'
import { snsBrokerError } from '../../src/sns/broker-errors.js'
import { sqsBrokerError } from '../../src/sqs/broker-errors.js'
import { KEY, signedRequest } from './sign.js'

const pick = (e: { code: string; status: number }) => [e.code, e.status]

describe("the broker's own failures, per service", () => {
  it('uses SQS names for SQS', () => {
    expect(pick(sqsBrokerError(429, 'slow down'))).toEqual(['RequestThrottled', 400])
    expect(pick(sqsBrokerError(503, 'down'))).toEqual(['ServiceUnavailable', 503])
    expect(pick(sqsBrokerError(500, 'boom'))).toEqual(['InternalFailure', 500])
    expect(pick(sqsBrokerError(403, 'no'))).toEqual(['AccessDenied', 403])
    expect(pick(sqsBrokerError(413, 'big'))).toEqual(['InvalidParameterValue', 400])
  })

  it('uses SNS names for SNS', () => {
    expect(pick(snsBrokerError(429, 'slow down'))).toEqual(['Throttled', 429])
    expect(pick(snsBrokerError(503, 'down'))).toEqual(['ServiceUnavailable', 503])
    expect(pick(snsBrokerError(500, 'boom'))).toEqual(['InternalError', 500])
    expect(pick(snsBrokerError(403, 'no'))).toEqual(['AuthorizationError', 403])
    expect(pick(snsBrokerError(413, 'big'))).toEqual(['InvalidParameter', 400])
  })

  it('hands a failure to the mapping of the service that was called', async () => {
    const throttled = Object.assign(new Error('too many'), { status: 429 })
    const toy = (scope: string, brokerError: AwsService<string>['brokerError']): AwsService<string> => ({
      scope,
      jsonNamespace: `com.amazonaws.${scope}`,
      xmlNamespace: 'urn:toy',
      brokerError,
      requestShapes: {},
      actions: { Fail: { roles: ['admin'], run: async () => { throw throttled } } },
    })
    const keys = parseAccessKeys(`${KEY.accessKeyId}:${KEY.secret}::admin`) as AccessKeys
    const options = {
      services: [toy('sqs', sqsBrokerError), toy('sns', snsBrokerError)],
      keys,
      maxBodyBytes: 4096,
      context: () => 'tenant-x',
      requestId: () => 'req-1',
      mapError: (_error: unknown, service: AwsService<string>) => service.brokerError(429, 'too many'),
    }
    for (const [scope, code, status] of [['sqs', 'RequestThrottled', 400], ['sns', 'Throttled', 429]] as const) {
      const request = await signedRequest({ url: 'http://localhost/', body: 'Action=Fail', service: scope, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
      const response = await handleAwsRequest(request, options)
      expect(response.status).toBe(status)
      expect(await response.text()).toContain(`<Code>${code}</Code>`)
    }
  })
})
