// SNS's names for a failure from the broker itself. They differ from SQS's (src/sqs/broker-errors.ts):
// SNS says `Throttled` with HTTP 429, `InternalError`, `AuthorizationError` and `InvalidParameter`,
// and SDKs pick the exception class from these strings.
import { AwsError } from '../aws/errors.js'

export function snsBrokerError(status: number, message: string): AwsError {
  if (status === 503) return new AwsError('ServiceUnavailable', message, 503)
  if (status >= 500) return new AwsError('InternalError', 'The request processing has failed because of an unknown error.', 500)
  if (status === 429) return new AwsError('Throttled', message, 429)
  if (status === 403) return new AwsError('AuthorizationError', message, 403)
  return new AwsError('InvalidParameter', message, 400)
}
