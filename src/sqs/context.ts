// Per-request facts every SQS action needs: the account, the receipt key, and the queue a
// QueueUrl names (its registry record, or AWS's QueueDoesNotExist).
import type { AwsCall } from '../aws/endpoint.js'
import type { AwsContext } from '../aws/mount.js'
import { optionalString, requiredString, type Input } from '../aws/input.js'
import { queueDoesNotExist } from './errors.js'
import { nameFromUrl } from './queue-url.js'
import { receiptKey } from './receipt.js'
import { getQueue, type Stored } from './registry.js'

export type SqsCall = AwsCall<AwsContext>

export const accountOf = (call: SqsCall) => call.context.get('config').AWS_ACCOUNT_ID

const keys = new WeakMap<object, Promise<Uint8Array<ArrayBuffer>>>()

/** The receipt signing key, derived once per configuration. */
export function receiptKeyOf(call: SqsCall): Promise<Uint8Array<ArrayBuffer>> {
  const config = call.context.get('config')
  let key = keys.get(config)
  if (!key) {
    const secrets = [...(config.AWS_ACCESS_KEYS?.values() ?? [])].map((k) => k.secret)
    keys.set(config, (key = receiptKey(config.SQS_RECEIPT_SECRET, secrets)))
  }
  return key
}

export async function resolveQueue(call: SqsCall, input: Input): Promise<Stored> {
  // A Query request posted to the queue URL may leave QueueUrl out: the URL it was posted to says it.
  const onQueueUrl = call.url.pathname.split('/').filter((p) => p !== '').length === 2
  const url = optionalString(input, 'QueueUrl') ?? (onQueueUrl ? call.url.href : requiredString(input, 'QueueUrl'))
  const name = nameFromUrl(url, accountOf(call))
  const stored = await getQueue(call.context, name)
  if (stored === null) throw queueDoesNotExist()
  return stored
}
