// ChangeMessageVisibility sets the visibility to now + VisibilityTimeout, shorter as well as longer:
// a message received under a long visibility and then shortened comes back after the short one.
import { ChangeMessageVisibilityCommand, CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs'
import { expect } from 'vitest'

const LONG_VISIBILITY = 600
// Far below LONG_VISIBILITY, so a redelivery inside it can only come from the shortened visibility.
const POLL_DEADLINE_MS = 30_000

export async function shortenVisibilityScenario(sqs: SQSClient, suffix: string): Promise<void> {
  const { QueueUrl: url } = await sqs.send(new CreateQueueCommand({ QueueName: `shorten-${suffix}`, Attributes: { VisibilityTimeout: String(LONG_VISIBILITY) } }))
  await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'come back soon' }))
  const first = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 2 }))
  const message = first.Messages![0]!
  // Under its long visibility the message is not receivable.
  expect((await sqs.send(new ReceiveMessageCommand({ QueueUrl: url }))).Messages ?? []).toEqual([])
  await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: message.ReceiptHandle!, VisibilityTimeout: 1 }))
  const until = Date.now() + POLL_DEADLINE_MS
  let again: string[] = []
  while (again.length === 0 && Date.now() < until) {
    const r = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 1, MessageSystemAttributeNames: ['ApproximateReceiveCount'] }))
    again = (r.Messages ?? []).map((m) => `${m.Body}#${m.Attributes?.ApproximateReceiveCount}`)
  }
  expect(again).toEqual(['come back soon#2'])
}
