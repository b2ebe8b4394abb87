// The unmodified @aws-sdk/client-sqs on Node for the less travelled actions: message move tasks
// (run within their Start request, so Cancel is refused), queue tags, and permissions (accepted and
// validated, never enforced: the broker's roles decide who may call what).
import {
  AddPermissionCommand,
  CancelMessageMoveTaskCommand,
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  ListQueueTagsCommand,
  ReceiveMessageCommand,
  RemovePermissionCommand,
  SendMessageCommand,
  StartMessageMoveTaskCommand,
  TagQueueCommand,
  UntagQueueCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import { servedApp, type ServedApp } from '../helpers/served-app.js'
import { SQS_ENV, sqsClient } from './sqs-client.js'

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

async function arnOf(url: string): Promise<string> {
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }))
  return Attributes!.QueueArn!
}

describe('@aws-sdk/client-sqs: move tasks, tags and permissions', () => {
  it('moves dead-lettered messages back to their source, lists the task, and refuses Cancel', async () => {
    const { QueueUrl: dlq } = await sqs.send(new CreateQueueCommand({ QueueName: 'move-dead' }))
    const dlqArn = await arnOf(dlq!)
    const { QueueUrl: source } = await sqs.send(
      new CreateQueueCommand({ QueueName: 'move-source', Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 1 }) } }),
    )
    await sqs.send(new SendMessageCommand({ QueueUrl: source, MessageBody: 'bounce' }))
    const first = await sqs.send(new ReceiveMessageCommand({ QueueUrl: source, WaitTimeSeconds: 2 }))
    await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: source, ReceiptHandle: first.Messages![0]!.ReceiptHandle!, VisibilityTimeout: 0 }))
    // The next receive redrives it instead of handing it out.
    expect((await sqs.send(new ReceiveMessageCommand({ QueueUrl: source }))).Messages ?? []).toEqual([])

    const { TaskHandle } = await sqs.send(new StartMessageMoveTaskCommand({ SourceArn: dlqArn }))
    expect(TaskHandle).toMatch(/.+/)
    const back = await sqs.send(new ReceiveMessageCommand({ QueueUrl: source, WaitTimeSeconds: 2 }))
    expect(back.Messages?.map((m) => m.Body)).toEqual(['bounce'])
    expect((await sqs.send(new ReceiveMessageCommand({ QueueUrl: dlq }))).Messages ?? []).toEqual([])

    const { Results } = await sqs.send(new ListMessageMoveTasksCommand({ SourceArn: dlqArn, MaxResults: 10 }))
    expect(Results?.map((r) => [r.TaskHandle, r.Status, r.ApproximateNumberOfMessagesMoved, r.SourceArn])).toEqual([[TaskHandle, 'COMPLETED', 1, dlqArn]])

    await expect(sqs.send(new CancelMessageMoveTaskCommand({ TaskHandle: TaskHandle! }))).rejects.toMatchObject({ name: 'UnsupportedOperation' })
    await expect(sqs.send(new StartMessageMoveTaskCommand({ SourceArn: dlqArn.replace('move-dead', 'no-such-queue') }))).rejects.toMatchObject({ name: 'ResourceNotFoundException' })
  })

  it('tags, lists and untags a queue', async () => {
    const { QueueUrl: url } = await sqs.send(new CreateQueueCommand({ QueueName: 'tagged', tags: { team: 'core' } }))
    expect((await sqs.send(new ListQueueTagsCommand({ QueueUrl: url }))).Tags).toEqual({ team: 'core' })
    await sqs.send(new TagQueueCommand({ QueueUrl: url, Tags: { env: 'test', team: 'edge' } }))
    expect((await sqs.send(new ListQueueTagsCommand({ QueueUrl: url }))).Tags).toEqual({ team: 'edge', env: 'test' })
    await sqs.send(new UntagQueueCommand({ QueueUrl: url, TagKeys: ['team', 'absent'] }))
    expect((await sqs.send(new ListQueueTagsCommand({ QueueUrl: url }))).Tags).toEqual({ env: 'test' })
    await sqs.send(new UntagQueueCommand({ QueueUrl: url, TagKeys: ['env'] }))
    expect((await sqs.send(new ListQueueTagsCommand({ QueueUrl: url }))).Tags).toBeUndefined()
    await expect(sqs.send(new TagQueueCommand({ QueueUrl: url, Tags: {} }))).rejects.toMatchObject({ name: 'InvalidParameterValue' })
  })

  it('accepts and validates AddPermission and RemovePermission without enforcing them', async () => {
    const { QueueUrl: url } = await sqs.send(new CreateQueueCommand({ QueueName: 'permitted' }))
    await sqs.send(new AddPermissionCommand({ QueueUrl: url, Label: 'share', AWSAccountIds: ['111122223333'], Actions: ['SendMessage'] }))
    await expect(sqs.send(new AddPermissionCommand({ QueueUrl: url, Label: 'share', AWSAccountIds: [], Actions: ['SendMessage'] }))).rejects.toMatchObject({ name: 'InvalidParameterValue' })
    await sqs.send(new RemovePermissionCommand({ QueueUrl: url, Label: 'share' }))
    await expect(sqs.send(new RemovePermissionCommand({ QueueUrl: url!.replace('permitted', 'no-such-queue'), Label: 'share' }))).rejects.toMatchObject({ name: 'QueueDoesNotExist' })
    // The permission changed nothing: the queue still answers its caller as before.
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'still mine' }))
    expect((await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 2 }))).Messages?.map((m) => m.Body)).toEqual(['still mine'])
  })
})
