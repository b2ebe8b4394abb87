// TagResource, UntagResource and ListTagsForResource on topics. SNS's tag actions are not SQS's:
// the resource is an ARN, tags travel as a list of Key/Value pairs, and a missing resource is
// ResourceNotFound (404), not the topic actions' NotFound.
import { requiredString, stringList, type Input } from '../aws/input.js'
import { topicNameOf } from './arn.js'
import { resourceNotFound, snsInvalidParameter, tagLimitExceeded, tagPolicy } from './errors.js'
import type { SnsHost } from './host.js'
import { getTopic } from './registry.js'
import { tagsFromInput, updateTopic } from './topic-actions.js'
import { AwsError } from '../aws/errors.js'

const MAX_TAGS = 50

async function checkResource(host: SnsHost, arn: string): Promise<void> {
  const name = topicNameOf(arn, host.account)
  if (name === null) throw snsInvalidParameter('Invalid parameter: ResourceArn')
  if ((await getTopic(host.db, name)) === null) throw resourceNotFound()
}

/** A topic that vanished between the check and the write is still ResourceNotFound. */
async function update(host: SnsHost, arn: string, change: Parameters<typeof updateTopic>[2]): Promise<void> {
  try {
    await updateTopic(host, arn, change)
  } catch (e) {
    if (e instanceof AwsError && e.code === 'NotFound') throw resourceNotFound()
    throw e
  }
}

export async function tagResourceAction(input: Input, host: SnsHost) {
  const arn = requiredString(input, 'ResourceArn')
  const tags = tagsFromInput(input)
  for (const [k, v] of Object.entries(tags)) {
    if (k.length < 1 || k.length > 128 || k.startsWith('aws:')) throw tagPolicy(`Invalid tag key: ${k.slice(0, 128)}`)
    if (v.length > 256) throw tagPolicy(`Invalid tag value for key ${k}`)
  }
  await checkResource(host, arn)
  await update(host, arn, (t) => {
    const merged = { ...t.tags, ...tags }
    if (Object.keys(merged).length > MAX_TAGS) throw tagLimitExceeded()
    return { ...t, tags: merged }
  })
  return null
}

export async function untagResourceAction(input: Input, host: SnsHost) {
  const arn = requiredString(input, 'ResourceArn')
  const keys = stringList(input, 'TagKeys')
  await checkResource(host, arn)
  await update(host, arn, (t) => {
    const tags = { ...t.tags }
    for (const k of keys) delete tags[k]
    return { ...t, tags }
  })
  return null
}

export async function listTagsForResourceAction(input: Input, host: SnsHost) {
  const arn = requiredString(input, 'ResourceArn')
  const name = topicNameOf(arn, host.account)
  if (name === null) throw snsInvalidParameter('Invalid parameter: ResourceArn')
  const topic = await getTopic(host.db, name)
  if (topic === null) throw resourceNotFound()
  // In key order: the stored record's key order is the store's, not the order tags were added in.
  const tags = Object.entries(topic.record.tags).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return { Tags: tags.map(([Key, Value]) => ({ Key, Value })) }
}
