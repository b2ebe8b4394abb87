// SNS names and ARNs. A topic ARN is `arn:aws:sns:<region>:<account>:<name>` and a subscription's
// appends `:<id>`. The region is a label here, not a place: any region a client signs for reaches
// the same topics, so a lookup goes by account and name and ignores the region part.

/** 1-256 letters, digits, `-` and `_`; a FIFO topic adds `.fifo`, the only period allowed. */
const TOPIC_NAME = /^[A-Za-z0-9_-]{1,256}$/

export function isValidTopicName(name: string): boolean {
  const base = name.endsWith('.fifo') ? name.slice(0, -'.fifo'.length) : name
  return TOPIC_NAME.test(base) && name.length <= 256
}

export const topicArn = (region: string, account: string, name: string) => `arn:aws:sns:${region}:${account}:${name}`

export interface ParsedArn {
  service: string
  region: string
  account: string
  /** Everything after the account, split on ':' (a topic name, then a subscription id). */
  resource: string[]
}

export function parseArn(arn: string): ParsedArn | null {
  const parts = arn.split(':')
  if (parts.length < 6 || parts[0] !== 'arn' || parts[1] !== 'aws') return null
  const [, , service = '', region = '', account = '', ...resource] = parts
  if (service === '' || account === '' || resource.some((r) => r === '')) return null
  return { service, region, account, resource }
}

/** The topic name a topic ARN of this account names, or null when it is not one. */
export function topicNameOf(arn: string, account: string): string | null {
  const p = parseArn(arn)
  if (p === null || p.service !== 'sns' || p.account !== account || p.resource.length !== 1) return null
  const [name = ''] = p.resource
  return isValidTopicName(name) ? name : null
}

/** The topic name and id a subscription ARN of this account names, or null. */
export function subscriptionOf(arn: string, account: string): { topicName: string; id: string } | null {
  const p = parseArn(arn)
  if (p === null || p.service !== 'sns' || p.account !== account || p.resource.length !== 2) return null
  const [topicName = '', id = ''] = p.resource
  return isValidTopicName(topicName) ? { topicName, id } : null
}
