// A consumer that hands every message back (ChangeMessageVisibility 0, what sqs-consumer does on a
// handler error) must still reach maxReceiveCount: every delivery counts, whatever ended the last.
import { ChangeMessageVisibilityCommand, CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs'
import { expect } from 'vitest'

const MAX_RECEIVES = 3

async function arnOf(sqs: SQSClient, url: string): Promise<string> {
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }))
  return Attributes!.QueueArn!
}

/** Standard and FIFO: hand back on each receive; the message lands in the DLQ after exactly MAX_RECEIVES receives. */
export async function handBackRedriveScenario(sqs: SQSClient, suffix: string): Promise<void> {
  for (const fifo of [false, true]) {
    const tail = fifo ? '.fifo' : ''
    const fifoAttributes = fifo ? { FifoQueue: 'true', ContentBasedDeduplication: 'true' } : {}
    const { QueueUrl: dlq } = await sqs.send(new CreateQueueCommand({ QueueName: `handback-dead-${suffix}${tail}`, Attributes: fifoAttributes }))
    const redrive = JSON.stringify({ deadLetterTargetArn: await arnOf(sqs, dlq!), maxReceiveCount: MAX_RECEIVES })
    const { QueueUrl: work } = await sqs.send(new CreateQueueCommand({ QueueName: `handback-${suffix}${tail}`, Attributes: { ...fifoAttributes, RedrivePolicy: redrive } }))
    await sqs.send(new SendMessageCommand({ QueueUrl: work, MessageBody: 'poison', ...(fifo ? { MessageGroupId: 'g' } : {}) }))
    const counts: string[] = []
    for (;;) {
      const r = await sqs.send(new ReceiveMessageCommand({ QueueUrl: work, WaitTimeSeconds: 1, MessageSystemAttributeNames: ['ApproximateReceiveCount'] }))
      const message = r.Messages?.[0]
      if (message === undefined) break
      counts.push(message.Attributes!.ApproximateReceiveCount!)
      expect(counts.length).toBeLessThanOrEqual(MAX_RECEIVES)
      await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: work, ReceiptHandle: message.ReceiptHandle!, VisibilityTimeout: 0 }))
    }
    expect(counts).toEqual(['1', '2', '3'])
    const dead = await sqs.send(new ReceiveMessageCommand({ QueueUrl: dlq, WaitTimeSeconds: 2, MessageSystemAttributeNames: ['All'] }))
    expect(dead.Messages?.map((m) => m.Body)).toEqual(['poison'])
    // The copy carries the receives it had at the source, and this receive on top.
    expect(dead.Messages![0]!.Attributes?.ApproximateReceiveCount).toBe(String(MAX_RECEIVES + 1))
  }
}
