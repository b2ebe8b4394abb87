// The topic actions: CreateTopic, DeleteTopic, GetTopicAttributes, SetTopicAttributes, ListTopics.
// A topic is a record in the KV store (./registry.ts); nothing is configured on the engine.
import { AwsError } from '../aws/errors.js'
import { optionalString, requiredString, stringMap, structList, type Input } from '../aws/input.js'
import { isValidTopicName, topicArn, topicNameOf } from './arn.js'
import { snsInvalidParameter, topicNotFound } from './errors.js'
import type { SnsHost } from './host.js'
import { createTopic, deleteTopic, getTopic, listTopics, replaceTopic, topicSubscriptions, type TopicRecord, type Versioned } from './registry.js'
import { fromToken, toToken } from './paging.js'

/** Attributes CreateTopic and SetTopicAttributes accept; FifoTopic only at create. */
const SETTABLE = ['DeliveryPolicy', 'DisplayName', 'Policy', 'SignatureVersion', 'TracingConfig', 'KmsMasterKeyId', 'ContentBasedDeduplication', 'ArchivePolicy', 'FifoThroughputScope', 'DataProtectionPolicy']
const CREATE_ONLY = ['FifoTopic']

export function tagsFromInput(input: Input): Record<string, string> {
  const tags: Record<string, string> = {}
  for (const t of structList(input, 'Tags')) {
    const key = t.Key
    const value = t.Value ?? ''
    if (typeof key !== 'string' || typeof value !== 'string') throw snsInvalidParameter('Invalid parameter: Tags Reason: every tag needs a Key and a Value')
    tags[key] = value
  }
  return tags
}

function checkAttribute(name: string, value: string, fifo: boolean): void {
  if (name === 'ContentBasedDeduplication') {
    if (!fifo) throw snsInvalidParameter('Invalid parameter: ContentBasedDeduplication Reason: Content-based deduplication can only be set for FIFO topics')
    if (value !== 'true' && value !== 'false') throw snsInvalidParameter('Invalid parameter: ContentBasedDeduplication Reason: must be true or false')
  }
  if (name === 'SignatureVersion' && value !== '1' && value !== '2') throw snsInvalidParameter('Invalid parameter: SignatureVersion')
  if ((name === 'Policy' || name === 'DeliveryPolicy' || name === 'ArchivePolicy') && value !== '') {
    try {
      JSON.parse(value)
    } catch {
      throw snsInvalidParameter(`Invalid parameter: ${name}`)
    }
  }
}

/** Reads the topic an ARN names, or answers NotFound (404) as AWS does. */
export async function topicByArn(host: SnsHost, arn: string): Promise<Versioned<TopicRecord>> {
  const name = topicNameOf(arn, host.account)
  if (name === null) {
    if (!arn.startsWith('arn:')) throw snsInvalidParameter('Invalid parameter: TopicArn')
    throw topicNotFound()
  }
  const topic = await getTopic(host.db, name)
  if (topic === null) throw topicNotFound()
  return topic
}

/** Retries a read-modify-write until no other writer slipped in between (a handful of rounds). */
export async function updateTopic(host: SnsHost, arn: string, change: (t: TopicRecord) => TopicRecord): Promise<TopicRecord> {
  for (let round = 0; round < 8; round++) {
    const current = await topicByArn(host, arn)
    const next = change(structuredClone(current.record))
    if (await replaceTopic(host.db, { record: next, version: current.version })) return next
  }
  throw new AwsError('ConcurrentAccess', 'Can not modify the topic: another request changed it at the same time.', 400)
}

export async function createTopicAction(input: Input, host: SnsHost, region: string) {
  const name = requiredString(input, 'Name')
  const attributes = stringMap(input, 'Attributes')
  const tags = tagsFromInput(input)
  if (!isValidTopicName(name)) throw snsInvalidParameter('Invalid parameter: Topic Name')
  const fifo = attributes.FifoTopic === 'true'
  if (attributes.FifoTopic !== undefined && attributes.FifoTopic !== 'true' && attributes.FifoTopic !== 'false') {
    throw snsInvalidParameter('Invalid parameter: FifoTopic Reason: must be true or false')
  }
  if (fifo !== name.endsWith('.fifo')) {
    throw snsInvalidParameter('Invalid parameter: Fifo Topic names must end with .fifo and a topic named .fifo must set FifoTopic=true')
  }
  for (const [k, v] of Object.entries(attributes)) {
    if (!SETTABLE.includes(k) && !CREATE_ONLY.includes(k)) throw snsInvalidParameter(`Invalid parameter: Attributes Reason: Unknown attribute ${k}`)
    checkAttribute(k, v, fifo)
  }
  const { FifoTopic: _fifo, ...stored } = attributes
  const record: TopicRecord = { name, arn: topicArn(region, host.account, name), fifo, attributes: stored, tags, createdAt: new Date().toISOString() }
  const { created, topic } = await createTopic(host.db, record)
  if (!created) {
    // Idempotent unless the request SUPPLIES an attribute or tag that differs from what is stored.
    for (const [k, v] of Object.entries(stored)) {
      if ((topic.record.attributes[k] ?? '') !== v) throw snsInvalidParameter('Invalid parameter: Attributes Reason: Topic already exists with different attributes')
    }
    for (const [k, v] of Object.entries(tags)) {
      if (topic.record.tags[k] !== v) throw snsInvalidParameter('Invalid parameter: Tags Reason: Topic already exists with different tags')
    }
  }
  return { TopicArn: topic.record.arn }
}

export async function deleteTopicAction(input: Input, host: SnsHost) {
  const arn = requiredString(input, 'TopicArn')
  const name = topicNameOf(arn, host.account)
  if (name === null) throw snsInvalidParameter('Invalid parameter: TopicArn')
  // Idempotent, as AWS documents: deleting a topic that is not there succeeds.
  await deleteTopic(host.db, name)
  return null
}

function defaultPolicy(t: TopicRecord, account: string): string {
  return JSON.stringify({
    Version: '2008-10-17',
    Id: '__default_policy_ID',
    Statement: [
      {
        Sid: '__default_statement_ID',
        Effect: 'Allow',
        Principal: { AWS: '*' },
        Action: ['SNS:GetTopicAttributes', 'SNS:SetTopicAttributes', 'SNS:AddPermission', 'SNS:RemovePermission', 'SNS:DeleteTopic', 'SNS:Subscribe', 'SNS:ListSubscriptionsByTopic', 'SNS:Publish'],
        Resource: t.arn,
        Condition: { StringEquals: { 'AWS:SourceOwner': account } },
      },
    ],
  })
}

export async function getTopicAttributesAction(input: Input, host: SnsHost) {
  const topic = (await topicByArn(host, requiredString(input, 'TopicArn'))).record
  const subscriptions = await topicSubscriptions(host.db, topic.name)
  const attributes: Record<string, string> = {
    TopicArn: topic.arn,
    Owner: host.account,
    Policy: defaultPolicy(topic, host.account),
    DisplayName: '',
    SubscriptionsConfirmed: String(subscriptions.length),
    // No subscription this facade creates is ever unconfirmed (same-account SQS).
    SubscriptionsPending: '0',
    SubscriptionsDeleted: '0',
    EffectiveDeliveryPolicy: JSON.stringify({ http: { defaultHealthyRetryPolicy: { minDelayTarget: 20, maxDelayTarget: 20, numRetries: 3, numMaxDelayRetries: 0, numNoDelayRetries: 0, numMinDelayRetries: 0, backoffFunction: 'linear' }, disableSubscriptionOverrides: false } }),
    ...topic.attributes,
  }
  if (topic.fifo) {
    attributes.FifoTopic = 'true'
    attributes.ContentBasedDeduplication = topic.attributes.ContentBasedDeduplication ?? 'false'
  }
  return { Attributes: attributes }
}

export async function setTopicAttributesAction(input: Input, host: SnsHost) {
  const arn = requiredString(input, 'TopicArn')
  const name = requiredString(input, 'AttributeName')
  const value = optionalString(input, 'AttributeValue') ?? ''
  if (!SETTABLE.includes(name)) throw snsInvalidParameter('Invalid parameter: AttributeName')
  await updateTopic(host, arn, (t) => {
    checkAttribute(name, value, t.fifo)
    t.attributes[name] = value
    return t
  })
  return null
}

export async function listTopicsAction(input: Input, host: SnsHost) {
  const after = fromToken(optionalString(input, 'NextToken'))
  const { records, next } = await listTopics(host.db, after, 100)
  return { Topics: records.map((t) => ({ TopicArn: t.arn })), ...(next ? { NextToken: toToken(next) } : {}) }
}
