// Queue URLs and ARNs. A URL is `<scheme>://<the host the client reached>/<account>/<name>`, so it
// is usable from wherever it was asked for; only its last two path segments are read back.
import { invalidParameter, queueDoesNotExist } from './errors.js'

const QUEUE_NAME = /^[A-Za-z0-9_-]{1,80}$/

/** SQS's rule: 1-80 of A-Z a-z 0-9 - _, and a FIFO queue's name ends in `.fifo` (within the 80). */
export function validQueueName(name: string): boolean {
  if (name.length > 80) return false
  return QUEUE_NAME.test(name.endsWith('.fifo') ? name.slice(0, -5) : name)
}

export function queueUrl(requestUrl: URL, account: string, name: string): string {
  return `${requestUrl.protocol}//${requestUrl.host}/${account}/${name}`
}

export const queueArn = (region: string, account: string, name: string) => `arn:aws:sqs:${region}:${account}:${name}`

/** The queue name a URL names; a URL of another account or of no queue is an unknown queue, as at AWS. */
export function nameFromUrl(url: string, account: string): string {
  let path: string
  try {
    path = new URL(url).pathname
  } catch {
    throw invalidParameter(`Value ${url.slice(0, 200)} for parameter QueueUrl is invalid. Reason: it is not a URL.`)
  }
  const parts = path.split('/').filter((p) => p !== '')
  if (parts.length !== 2 || parts[0] !== account || !validQueueName(decodeURIComponent(parts[1] as string))) throw queueDoesNotExist()
  return decodeURIComponent(parts[1] as string)
}

/** The queue name an ARN names (`arn:aws:sqs:<region>:<account>:<name>`), or null. */
export function nameFromArn(arn: string, account: string): string | null {
  const parts = arn.split(':')
  if (parts.length !== 6 || parts[0] !== 'arn' || parts[2] !== 'sqs' || parts[4] !== account) return null
  return validQueueName(parts[5] as string) ? (parts[5] as string) : null
}
