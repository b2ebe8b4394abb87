// The unmodified AWS SDK client for the facade's tests, pointed at a broker by its base URL.
import { SQSClient } from '@aws-sdk/client-sqs'

export const SQS_KEY = { accessKeyId: 'AKIDSQSTEST1', secretAccessKey: 'sqs-test-secret-0123456789abcdef' }
// The served app runs no maintenance lanes, so a receive fires its queue's due timers itself (as on Workers).
export const SQS_ENV = { AWS_ACCESS_KEYS: `${SQS_KEY.accessKeyId}:${SQS_KEY.secretAccessKey}::admin`, SQS_DEFAULT_WIDTH: '8', TIMERS_FIRE_ON_POP: 'true' }

export function sqsClient(base: string): SQSClient {
  return new SQSClient({ endpoint: base, region: 'eu-west-3', credentials: SQS_KEY, maxAttempts: 1 })
}
