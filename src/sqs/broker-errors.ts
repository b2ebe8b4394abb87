// SQS's names for a failure from the broker itself rather than from the request's SQS meaning: an
// outage, a throttle (a long poll past the parking caps), an oversized body, a refused role.
import { AwsError } from '../aws/errors.js'

export function sqsBrokerError(status: number, message: string): AwsError {
  if (status === 503) return new AwsError('ServiceUnavailable', message, 503)
  if (status >= 500) return new AwsError('InternalFailure', 'The request processing has failed because of an unknown error.', 500)
  if (status === 429) return new AwsError('RequestThrottled', message, 400)
  if (status === 403) return new AwsError('AccessDenied', message, 403)
  return new AwsError('InvalidParameterValue', message, 400)
}
