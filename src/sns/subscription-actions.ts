// Subscribe, Unsubscribe, ConfirmSubscription, ListSubscriptions, ListSubscriptionsByTopic and
// Get/SetSubscriptionAttributes. Only SQS queues of the same account can subscribe (docs/sns.md):
// every other protocol is refused by name, so a client reads why rather than a malformed-endpoint
// error. Such a subscription is confirmed at Subscribe, as AWS confirms same-account SQS.
import { AwsError } from '../aws/errors.js'
import { optionalString, requiredString, stringMap, type Input } from '../aws/input.js'
import { parseArn, subscriptionOf } from './arn.js'
import { snsInvalidParameter, subscriptionNotFound, topicNotFound } from './errors.js'
import type { SnsHost } from './host.js'
import { createSubscription, deleteSubscription, getSubscription, getTopic, listSubscriptions, replaceSubscription, type SubscriptionRecord, type Versioned } from './registry.js'
import { applySubscriptionAttribute, redriveTarget } from './subscription-attributes.js'
import { topicByArn } from './topic-actions.js'
import { fromToken, toToken } from './paging.js'
import { uuidv7 } from '../ids.js'

const OTHER_PROTOCOLS = ['http', 'https', 'email', 'email-json', 'sms', 'application', 'lambda', 'firehose']

async function subscriptionByArn(host: SnsHost, arn: string): Promise<Versioned<SubscriptionRecord>> {
  const ref = subscriptionOf(arn, host.account)
  if (ref === null) throw snsInvalidParameter('Invalid parameter: SubscriptionArn')
  const sub = await getSubscription(host.db, ref.topicName, ref.id)
  if (sub === null) throw subscriptionNotFound()
  return sub
}

/** A queue ARN this account owns and this tenant has, or InvalidParameter naming what is wrong. */
async function checkQueueEndpoint(host: SnsHost, arn: string, what: string): Promise<{ fifo: boolean }> {
  const parsed = parseArn(arn)
  if (parsed === null || parsed.service !== 'sqs' || parsed.resource.length !== 1) throw snsInvalidParameter(`Invalid parameter: ${what}: must be an SQS queue ARN`)
  if (parsed.account !== host.account) throw snsInvalidParameter(`Invalid parameter: ${what}: only queues of account ${host.account} can subscribe`)
  const queue = await host.queues.find(arn)
  if (queue === null) throw snsInvalidParameter(`Invalid parameter: ${what}: the queue does not exist`)
  return queue
}

export async function subscribeAction(input: Input, host: SnsHost) {
  const topicArn = requiredString(input, 'TopicArn')
  const protocol = requiredString(input, 'Protocol')
  const endpoint = optionalString(input, 'Endpoint')
  const requested = stringMap(input, 'Attributes')
  if (protocol !== 'sqs') {
    if (OTHER_PROTOCOLS.includes(protocol)) {
      throw snsInvalidParameter(`Invalid parameter: Protocol: ${protocol} subscriptions are not supported here; only sqs is`)
    }
    throw snsInvalidParameter('Invalid parameter: Amazon SNS does not support this protocol string')
  }
  if (endpoint === undefined || endpoint === '') throw snsInvalidParameter('Invalid parameter: Endpoint')
  const topic = (await topicByArn(host, topicArn)).record
  const queue = await checkQueueEndpoint(host, endpoint, 'Endpoint')
  if (topic.fifo && !queue.fifo) throw snsInvalidParameter('Invalid parameter: Invalid parameter: Endpoint Reason: FIFO SNS Topics currently only support FIFO SQS queues as endpoints')
  // AWS lets a standard topic feed a FIFO queue and invents a group id; here that is refused (docs/sns.md).
  if (!topic.fifo && queue.fifo) throw snsInvalidParameter('Invalid parameter: Endpoint Reason: a standard topic can not deliver to a FIFO queue here')
  let attributes: Record<string, string> = {}
  for (const [k, v] of Object.entries(requested)) attributes = applySubscriptionAttribute(attributes, k, v)
  if (attributes.RedrivePolicy !== undefined) await checkQueueEndpoint(host, redriveTarget(attributes.RedrivePolicy), 'RedrivePolicy')
  const id = uuidv7()
  const record: SubscriptionRecord = { id, arn: `${topic.arn}:${id}`, topicName: topic.name, topicArn: topic.arn, protocol: 'sqs', endpoint, owner: host.account, attributes }
  const { subscription } = await createSubscription(host.db, record)
  return { SubscriptionArn: subscription.arn }
}

export async function unsubscribeAction(input: Input, host: SnsHost) {
  const arn = requiredString(input, 'SubscriptionArn')
  const ref = subscriptionOf(arn, host.account)
  if (ref === null) throw snsInvalidParameter('Invalid parameter: SubscriptionArn')
  const sub = await getSubscription(host.db, ref.topicName, ref.id)
  // Unsubscribing twice succeeds at AWS, and here.
  if (sub !== null) await deleteSubscription(host.db, sub.record)
  return null
}

export async function confirmSubscriptionAction(input: Input, host: SnsHost): Promise<never> {
  await topicByArn(host, requiredString(input, 'TopicArn'))
  requiredString(input, 'Token')
  // Every subscription here is same-account SQS, confirmed at Subscribe: no token is ever minted.
  throw snsInvalidParameter('Invalid parameter: Token')
}

function listed(s: SubscriptionRecord) {
  return { SubscriptionArn: s.arn, Owner: s.owner, Protocol: s.protocol, Endpoint: s.endpoint, TopicArn: s.topicArn }
}

export async function listSubscriptionsAction(input: Input, host: SnsHost) {
  const { records, next } = await listSubscriptions(host.db, null, fromToken(optionalString(input, 'NextToken')), 100)
  return { Subscriptions: records.map(listed), ...(next ? { NextToken: toToken(next) } : {}) }
}

export async function listSubscriptionsByTopicAction(input: Input, host: SnsHost) {
  const topic = (await topicByArn(host, requiredString(input, 'TopicArn'))).record
  const { records, next } = await listSubscriptions(host.db, topic.name, fromToken(optionalString(input, 'NextToken')), 100)
  return { Subscriptions: records.map(listed), ...(next ? { NextToken: toToken(next) } : {}) }
}

export async function getSubscriptionAttributesAction(input: Input, host: SnsHost) {
  const sub = (await subscriptionByArn(host, requiredString(input, 'SubscriptionArn'))).record
  const { FilterPolicyScope, ...rest } = sub.attributes
  const attributes: Record<string, string> = {
    SubscriptionArn: sub.arn,
    TopicArn: sub.topicArn,
    Owner: sub.owner,
    Protocol: sub.protocol,
    Endpoint: sub.endpoint,
    ConfirmationWasAuthenticated: 'true',
    PendingConfirmation: 'false',
    RawMessageDelivery: 'false',
    SubscriptionPrincipal: `arn:aws:iam::${host.account}:root`,
    ...rest,
  }
  // AWS reports a scope only beside a policy, so a provisioner does not reconcile for ever.
  if (sub.attributes.FilterPolicy !== undefined) attributes.FilterPolicyScope = FilterPolicyScope ?? 'MessageAttributes'
  return { Attributes: attributes }
}

export async function setSubscriptionAttributesAction(input: Input, host: SnsHost) {
  const arn = requiredString(input, 'SubscriptionArn')
  const name = requiredString(input, 'AttributeName')
  const value = optionalString(input, 'AttributeValue') ?? ''
  for (let round = 0; round < 8; round++) {
    const sub = await subscriptionByArn(host, arn)
    if ((await getTopic(host.db, sub.record.topicName)) === null) throw topicNotFound()
    const attributes = applySubscriptionAttribute(sub.record.attributes, name, value)
    if (name === 'RedrivePolicy' && attributes.RedrivePolicy !== undefined) await checkQueueEndpoint(host, redriveTarget(attributes.RedrivePolicy), 'RedrivePolicy')
    if (await replaceSubscription(host.db, { record: { ...sub.record, attributes }, version: sub.version })) return null
  }
  throw new AwsError('ConcurrentAccess', 'Can not modify the subscription: another request changed it at the same time.', 400)
}
