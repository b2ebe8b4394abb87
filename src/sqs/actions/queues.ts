// The queue actions: create, look up, list, attributes, purge, delete, tags, permissions.
import type { AwsAction } from '../../aws/endpoint.js'
import type { AwsContext } from '../../aws/mount.js'
import { optionalInt, optionalString, requiredString, stringList, stringMap } from '../../aws/input.js'
import { ROLE_SETS } from '../../http/route.js'
import { fromConfigureError } from '../../errors.js'
import { QUEUE_MODE } from '../../names.js'
import { checkAttributes, COMPUTED, defaults, queueOptions, redrivePolicy, WIDTH_ATTRIBUTE } from '../attributes.js'
import { accountOf, resolveQueue, type SqsCall } from '../context.js'
import { invalidAttributeName, invalidAttributeValue, invalidParameter, purgeInProgress, queueDeletedRecently, queueDoesNotExist, queueNameExists } from '../errors.js'
import { nameFromArn, queueArn, queueUrl, validQueueName } from '../queue-url.js'
import { createQueueRecord, deleteQueueRecord, getQueue, listQueues, modifyQueue, recentlyDeleted, type QueueRecord } from '../registry.js'
import { DELAY_PREFIX } from './delay.js'

type Action = AwsAction<AwsContext>

const PURGE_COOLDOWN_MS = 60_000

async function configureEngineQueue(call: SqsCall, record: QueueRecord): Promise<void> {
  const c = call.context
  await c.get('db').call('configure_queue_v1', { queue: record.name, options: queueOptions(record.attributes, record.fifo), replace: false }).catch((error: unknown) => {
    throw fromConfigureError(error)
  })
}

/** A RedrivePolicy must name an existing queue of the same kind, and not the queue itself. */
async function checkRedrive(call: SqsCall, name: string, fifo: boolean, attributes: Record<string, string>): Promise<void> {
  const policy = redrivePolicy(attributes)
  if (policy === null) return
  const target = nameFromArn(policy.deadLetterTargetArn, accountOf(call))
  if (target === null) throw invalidAttributeValue('Value for parameter RedrivePolicy is invalid. Reason: deadLetterTargetArn is not a queue ARN of this account.')
  if (target === name) throw invalidAttributeValue('Value for parameter RedrivePolicy is invalid. Reason: a queue cannot be its own dead-letter queue.')
  const stored = await getQueue(call.context, target)
  if (stored === null) throw invalidAttributeValue('Value for parameter RedrivePolicy is invalid. Reason: Dead letter target does not exist.')
  if (stored.record.fifo !== fifo) throw invalidAttributeValue('Value for parameter RedrivePolicy is invalid. Reason: a FIFO queue needs a FIFO dead-letter queue, and a standard one a standard one.')
}

const createQueue: Action = {
  roles: ROLE_SETS.RW_A,
  async run(input, call) {
    const name = requiredString(input, 'QueueName')
    if (!validQueueName(name)) throw invalidParameter('Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length.')
    const asked = stringMap(input, 'Attributes')
    const fifo = name.endsWith('.fifo')
    if ((asked.FifoQueue === 'true') !== fifo) {
      if (asked.FifoQueue === 'true' || (fifo && asked.FifoQueue !== undefined)) throw invalidParameter('The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix.')
    }
    checkAttributes(asked, fifo, true)
    const width = fifo ? 0 : Number(asked[WIDTH_ATTRIBUTE] ?? call.context.get('config').SQS_DEFAULT_WIDTH)
    const attributes = { ...defaults(fifo), ...asked }
    delete attributes[WIDTH_ATTRIBUTE]
    await checkRedrive(call, name, fifo, attributes)
    const url = queueUrl(call.url, accountOf(call), name)
    const existing = await getQueue(call.context, name)
    if (existing !== null) return sameOrRefuse(existing.record, asked, width, url)
    if (await recentlyDeleted(call.context, name)) throw queueDeletedRecently()
    const now = Math.floor(Date.now() / 1000)
    const tags = stringMap(input, 'tags')
    const record: QueueRecord = { name, fifo, width, attributes, tags: Object.keys(tags).length > 0 ? tags : stringMap(input, 'Tags'), created: now, modified: now }
    const { created, stored } = await createQueueRecord(call.context, record)
    if (!created) return sameOrRefuse(stored.record, asked, width, url)
    await configureEngineQueue(call, record)
    return { QueueUrl: url }
  },
}

/** CreateQueue of an existing name: the same URL, unless an attribute it SUPPLIES differs (AWS's rule). */
function sameOrRefuse(record: QueueRecord, asked: Record<string, string>, width: number, url: string) {
  for (const [key, value] of Object.entries(asked)) {
    if (key === WIDTH_ATTRIBUTE ? width !== record.width : (record.attributes[key] ?? '') !== value) throw queueNameExists(record.name)
  }
  return { QueueUrl: url }
}

const getQueueUrl: Action = {
  roles: ROLE_SETS.R_RW_A,
  async run(input, call) {
    const name = requiredString(input, 'QueueName')
    if (!validQueueName(name) || (await getQueue(call.context, name)) === null) throw queueDoesNotExist()
    return { QueueUrl: queueUrl(call.url, accountOf(call), name) }
  },
}

const listQueuesAction: Action = {
  roles: ROLE_SETS.R_RW_A,
  async run(input, call) {
    const prefix = optionalString(input, 'QueueNamePrefix') ?? ''
    const max = optionalInt(input, 'MaxResults', 1, 1000)
    const token = optionalString(input, 'NextToken')
    const page = await listQueues(call.context, prefix, token === undefined ? undefined : atobSafe(token), max ?? 1000)
    const urls = page.records.map((r) => queueUrl(call.url, accountOf(call), r.name))
    // Without MaxResults AWS answers at most 1000 and no token.
    return { QueueUrls: urls, ...(max !== undefined && page.next !== null ? { NextToken: btoa(page.next) } : {}) }
  },
}

function atobSafe(token: string): string {
  try {
    return atob(token)
  } catch {
    throw invalidParameter('Invalid NextToken value.')
  }
}

const getQueueAttributes: Action = {
  roles: ROLE_SETS.R_RW_A,
  async run(input, call) {
    const { record } = await resolveQueue(call, input)
    const names = stringList(input, 'AttributeNames')
    const all = names.includes('All')
    const want = (n: string) => all || names.includes(n)
    for (const n of names) if (n !== 'All' && !COMPUTED.includes(n) && !(n in defaults(true)) && !['Policy', 'RedrivePolicy', 'RedriveAllowPolicy', 'KmsMasterKeyId', 'KmsDataKeyReusePeriodSeconds', WIDTH_ATTRIBUTE].includes(n)) throw invalidAttributeName(n)
    const out: Record<string, string> = {}
    for (const [k, v] of Object.entries(record.attributes)) if (want(k) && v !== '') out[k] = v
    if (!record.fifo && want(WIDTH_ATTRIBUTE)) out[WIDTH_ATTRIBUTE] = String(record.width)
    if (want('QueueArn')) out.QueueArn = queueArn(call.region, accountOf(call), record.name)
    if (want('CreatedTimestamp')) out.CreatedTimestamp = String(record.created)
    if (want('LastModifiedTimestamp')) out.LastModifiedTimestamp = String(record.modified)
    const db = call.context.get('db')
    if (want('ApproximateNumberOfMessages') || want('ApproximateNumberOfMessagesNotVisible')) {
      const depth = await db.call('log_queue_depth_v1', { queue: record.name, group: QUEUE_MODE })
      if (want('ApproximateNumberOfMessages')) out.ApproximateNumberOfMessages = String(depth.ready)
      if (want('ApproximateNumberOfMessagesNotVisible')) out.ApproximateNumberOfMessagesNotVisible = String(depth.processing)
    }
    if (want('ApproximateNumberOfMessagesDelayed')) {
      const delayed = await db.call('timers_count_v1', { queue: record.name, prefix: DELAY_PREFIX })
      out.ApproximateNumberOfMessagesDelayed = String(delayed.count)
    }
    return Object.keys(out).length > 0 ? { Attributes: out } : {}
  },
}

const setQueueAttributes: Action = {
  roles: ROLE_SETS.RW_A,
  async run(input, call) {
    const { record } = await resolveQueue(call, input)
    const asked = stringMap(input, 'Attributes')
    checkAttributes(asked, record.fifo, false)
    await checkRedrive(call, record.name, record.fifo, { ...record.attributes, ...asked })
    const next = await modifyQueue(call.context, record.name, (r) => ({ ...r, attributes: { ...r.attributes, ...asked }, modified: Math.floor(Date.now() / 1000) }))
    if (next === null) throw queueDoesNotExist()
    await configureEngineQueue(call, next)
    return null
  },
}

const purgeQueue: Action = {
  roles: ROLE_SETS.A,
  async run(input, call) {
    const { record } = await resolveQueue(call, input)
    const now = Date.now()
    if (record.purgedAt !== undefined && now - record.purgedAt < PURGE_COOLDOWN_MS) throw purgeInProgress(record.name)
    await modifyQueue(call.context, record.name, (r) => ({ ...r, purgedAt: now }))
    const db = call.context.get('db')
    // A queue nothing was ever sent to has no partition yet: nothing to clear.
    await db.call('queue_clear_v1', { queue: record.name }).catch((error: unknown) => {
      if (!(error instanceof Error && 'sqlstate' in error && (error as { sqlstate: string }).sqlstate === 'QMNFP')) throw error
    })
    return null
  },
}

const deleteQueue: Action = {
  roles: ROLE_SETS.A,
  async run(input, call) {
    const { record } = await resolveQueue(call, input)
    await call.context.get('db').call('delete_queue_v1', { queue: record.name })
    await deleteQueueRecord(call.context, record.name)
    return null
  },
}

const listQueueTags: Action = {
  roles: ROLE_SETS.R_RW_A,
  async run(input, call) {
    const { record } = await resolveQueue(call, input)
    return Object.keys(record.tags).length > 0 ? { Tags: record.tags } : {}
  },
}

const MAX_TAGS = 50

const tagQueue: Action = {
  roles: ROLE_SETS.RW_A,
  async run(input, call) {
    const { record } = await resolveQueue(call, input)
    const tags = stringMap(input, 'Tags')
    if (Object.keys(tags).length === 0) throw invalidParameter('Tags must name at least one tag.')
    const next = await modifyQueue(call.context, record.name, (r) => ({ ...r, tags: { ...r.tags, ...tags } }))
    if (next && Object.keys(next.tags).length > MAX_TAGS) throw invalidParameter(`A queue has at most ${MAX_TAGS} tags.`)
    return null
  },
}

const untagQueue: Action = {
  roles: ROLE_SETS.RW_A,
  async run(input, call) {
    const { record } = await resolveQueue(call, input)
    const keys = stringList(input, 'TagKeys')
    await modifyQueue(call.context, record.name, (r) => ({ ...r, tags: Object.fromEntries(Object.entries(r.tags).filter(([k]) => !keys.includes(k))) }))
    return null
  },
}

const listDeadLetterSourceQueues: Action = {
  roles: ROLE_SETS.R_RW_A,
  async run(input, call) {
    const { record } = await resolveQueue(call, input)
    const urls: string[] = []
    let after: string | undefined
    for (;;) {
      const page = await listQueues(call.context, '', after, 1000)
      for (const r of page.records) {
        const policy = redrivePolicy(r.attributes)
        if (policy && nameFromArn(policy.deadLetterTargetArn, accountOf(call)) === record.name && policy.deadLetterTargetArn.endsWith(`:${record.name}`)) urls.push(queueUrl(call.url, accountOf(call), r.name))
      }
      if (page.next === null) break
      after = page.next
    }
    return { queueUrls: urls }
  },
}

/** Accepted and validated, never enforced: authorization here is the broker's roles, not an SQS policy. */
const permission = (needsPolicy: boolean): Action => ({
  roles: ROLE_SETS.A,
  async run(input, call) {
    await resolveQueue(call, input)
    requiredString(input, 'Label')
    if (needsPolicy && stringList(input, 'AWSAccountIds').length === 0) throw invalidParameter('AWSAccountIds must name at least one account.')
    return null
  },
})

export const queueActions = {
  CreateQueue: createQueue,
  GetQueueUrl: getQueueUrl,
  ListQueues: listQueuesAction,
  GetQueueAttributes: getQueueAttributes,
  SetQueueAttributes: setQueueAttributes,
  PurgeQueue: purgeQueue,
  DeleteQueue: deleteQueue,
  ListQueueTags: listQueueTags,
  TagQueue: tagQueue,
  UntagQueue: untagQueue,
  ListDeadLetterSourceQueues: listDeadLetterSourceQueues,
  AddPermission: permission(true),
  RemovePermission: permission(false),
}
