// What the SNS actions need from the broker around them, kept to an interface so the actions do not
// depend on Hono or on the SQS facade's internals: the tenant's database, the account id in ARNs,
// and the SQS queues a subscription delivers to (src/sns/sqs-queues.ts implements that part).
import type { TenantDatabase } from '../db/tenant-database.js'
import type { MessageAttributes } from './filter-match.js'

/** One message for one subscribed queue, as SQS's SendMessage would carry it. */
export interface SqsDelivery {
  body: string
  attributes: MessageAttributes
  /** FIFO only: the publish's MessageGroupId and deduplication id, passed through as AWS does. */
  groupId?: string
  deduplicationId?: string
}

/** One copy for one queue: the queue's ARN and the message it receives. */
export interface QueueCopy {
  queueArn: string
  delivery: SqsDelivery
}

export interface SnsQueues {
  /** The SQS queue an ARN names in this tenant and account, or null when there is none. */
  find(arn: string): Promise<{ fifo: boolean } | null>
  /**
   * Stores every copy as SendMessage would store it, in ONE engine transaction: all of them or
   * none. Throws an AwsError when the copies cannot be stored.
   */
  deliver(copies: readonly QueueCopy[]): Promise<void>
}

export interface SnsHost {
  db: TenantDatabase
  account: string
  queues: SnsQueues
}
