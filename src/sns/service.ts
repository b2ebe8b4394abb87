// The SNS service on the shared AWS endpoint (src/aws/endpoint.ts): its 17 actions, the Query
// protocol's layout of their lists and maps, and its error namespace. SNS speaks only the Query/XML
// protocol; the endpoint tells it from SQS by the signature's credential scope (`sns`).
import type { AwsAction, AwsCall, AwsService } from '../aws/endpoint.js'
import { AwsError } from '../aws/errors.js'
import type { Input } from '../aws/input.js'
import type { Shapes } from '../aws/shapes.js'
import type { Role } from '../http/auth.js'
import { snsBrokerError } from './broker-errors.js'
import { snsInvalidParameter } from './errors.js'
import type { SnsHost } from './host.js'
import { publishAction, publishBatchAction } from './publish.js'
import {
  confirmSubscriptionAction,
  getSubscriptionAttributesAction,
  listSubscriptionsAction,
  listSubscriptionsByTopicAction,
  setSubscriptionAttributesAction,
  subscribeAction,
  unsubscribeAction,
} from './subscription-actions.js'
import { listTagsForResourceAction, tagResourceAction, untagResourceAction } from './tag-actions.js'
import { createTopicAction, deleteTopicAction, getTopicAttributesAction, listTopicsAction, setTopicAttributesAction } from './topic-actions.js'

const READ: readonly Role[] = ['read-only', 'read-write', 'admin']
const MANAGE: readonly Role[] = ['read-write', 'admin']
const PUBLISH: readonly Role[] = ['write-only', 'read-write', 'admin']

/** SNS wraps lists in `member` and maps in `entry`; topic and subscription maps use key/value. */
const messageAttributes = { kind: 'map', query: 'MessageAttributes', flat: false, key: 'Name', value: 'Value' } as const
const REQUEST_SHAPES: Shapes = {
  Attributes: { kind: 'map', query: 'Attributes', flat: false, key: 'key', value: 'value' },
  Tags: { kind: 'list', query: 'Tags', flat: false },
  TagKeys: { kind: 'list', query: 'TagKeys', flat: false },
  MessageAttributes: messageAttributes,
  PublishBatchRequestEntries: { kind: 'list', query: 'PublishBatchRequestEntries', flat: false, items: { MessageAttributes: messageAttributes } },
}
const list = (query: string) => ({ kind: 'list', query, flat: false }) as const
const RESPONSE_SHAPES: Shapes = {
  Topics: list('Topics'),
  Subscriptions: list('Subscriptions'),
  Successful: list('Successful'),
  Failed: list('Failed'),
}

type Run = (input: Input, host: SnsHost, call: AwsCall<unknown>) => Promise<Record<string, unknown> | null>

/**
 * The shared input readers answer SQS's names (MissingParameter, InvalidParameterValue); SNS names
 * both InvalidParameter, so a client's catch block written against SNS sees SNS's name.
 */
function snsNames(error: unknown): unknown {
  if (error instanceof AwsError && (error.code === 'MissingParameter' || error.code === 'InvalidParameterValue')) {
    return snsInvalidParameter(`Invalid parameter: ${error.message}`)
  }
  return error
}

/** `hostOf` builds the actions' view of the broker for one call (its tenant database, account, queues). */
export function snsService<C>(hostOf: (call: AwsCall<C>) => SnsHost): AwsService<C> {
  const action = (roles: readonly Role[], run: Run): AwsAction<C> => ({
    roles,
    responseShapes: RESPONSE_SHAPES,
    run: async (input, call) => {
      try {
        return await run(input, hostOf(call), call as AwsCall<unknown>)
      } catch (error) {
        throw snsNames(error)
      }
    },
  })
  return {
    scope: 'sns',
    jsonNamespace: 'com.amazonaws.sns',
    xmlNamespace: 'http://sns.amazonaws.com/doc/2010-03-31/',
    brokerError: snsBrokerError,
    requestShapes: REQUEST_SHAPES,
    actions: {
      CreateTopic: action(MANAGE, (i, h, c) => createTopicAction(i, h, c.region)),
      DeleteTopic: action(MANAGE, deleteTopicAction),
      GetTopicAttributes: action(READ, getTopicAttributesAction),
      SetTopicAttributes: action(MANAGE, setTopicAttributesAction),
      ListTopics: action(READ, listTopicsAction),
      Subscribe: action(MANAGE, subscribeAction),
      Unsubscribe: action(MANAGE, unsubscribeAction),
      ConfirmSubscription: action(MANAGE, confirmSubscriptionAction),
      ListSubscriptions: action(READ, listSubscriptionsAction),
      ListSubscriptionsByTopic: action(READ, listSubscriptionsByTopicAction),
      GetSubscriptionAttributes: action(READ, getSubscriptionAttributesAction),
      SetSubscriptionAttributes: action(MANAGE, setSubscriptionAttributesAction),
      TagResource: action(MANAGE, tagResourceAction),
      UntagResource: action(MANAGE, untagResourceAction),
      ListTagsForResource: action(READ, listTagsForResourceAction),
      Publish: action(PUBLISH, publishAction),
      PublishBatch: action(PUBLISH, publishBatchAction),
    },
  }
}
