// The SQS service as the shared AWS endpoint takes it: its scope, its JSON target prefix, the
// Query protocol's layout of its request members, and the action table.
import type { AwsService } from '../aws/endpoint.js'
import type { AwsContext } from '../aws/mount.js'
import type { Shape, Shapes } from '../aws/shapes.js'
import { sqsBrokerError } from './broker-errors.js'
import { moveTaskActions } from './actions/move-tasks.js'
import { queueActions } from './actions/queues.js'
import { receiveActions } from './actions/receive.js'
import { sendActions } from './actions/send.js'
import { settleActions } from './actions/settle.js'

const messageAttributes: Shape = { kind: 'map', query: 'MessageAttribute', flat: true, key: 'Name', value: 'Value' }
const systemAttributes: Shape = { kind: 'map', query: 'MessageSystemAttribute', flat: true, key: 'Name', value: 'Value' }
const entry: Shapes = { MessageAttributes: messageAttributes, MessageSystemAttributes: systemAttributes }

/** SQS's Query members, flattened, as its 2012-11-05 API names them. */
const requestShapes: Shapes = {
  Attributes: { kind: 'map', query: 'Attribute', flat: true, key: 'Name', value: 'Value' },
  AttributeNames: { kind: 'list', query: 'AttributeName', flat: true },
  MessageSystemAttributeNames: { kind: 'list', query: 'MessageSystemAttributeName', flat: true },
  MessageAttributeNames: { kind: 'list', query: 'MessageAttributeName', flat: true },
  MessageAttributes: messageAttributes,
  MessageSystemAttributes: systemAttributes,
  Tags: { kind: 'map', query: 'Tag', flat: true, key: 'Key', value: 'Value' },
  TagKeys: { kind: 'list', query: 'TagKey', flat: true },
  AWSAccountIds: { kind: 'list', query: 'AWSAccountId', flat: true },
  Actions: { kind: 'list', query: 'ActionName', flat: true },
  QueueUrls: { kind: 'list', query: 'QueueUrl', flat: true },
  queueUrls: { kind: 'list', query: 'QueueUrl', flat: true },
  Results: { kind: 'list', query: 'ListMessageMoveTasksResultEntry', flat: true },
}

// Batch entries have a different Query name per action; only one is present in any request.
const batchEntries = (query: string): Shapes => ({ [`Entries.${query}`]: { kind: 'list', json: 'Entries', query, flat: true, items: entry } })
const entryShapes: Shapes = Object.assign(
  {},
  ...['SendMessageBatchRequestEntry', 'DeleteMessageBatchRequestEntry', 'ChangeMessageVisibilityBatchRequestEntry'].map(batchEntries),
)

export const sqsService: AwsService<AwsContext> = {
  scope: 'sqs',
  targetPrefix: 'AmazonSQS',
  jsonNamespace: 'com.amazonaws.sqs',
  xmlNamespace: 'http://queue.amazonaws.com/doc/2012-11-05/',
  brokerError: sqsBrokerError,
  requestShapes: { ...requestShapes, ...entryShapes },
  actions: { ...queueActions, ...sendActions, ...receiveActions, ...settleActions, ...moveTaskActions },
}
