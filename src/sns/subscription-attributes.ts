// The subscription attributes a client may set, each checked the way AWS checks it, so a stored
// subscription never carries a value a publish would choke on. FilterPolicy and FilterPolicyScope
// are checked together: a scope change re-reads the stored policy under the new scope.
import { InvalidFilterPolicy, InvalidFilterPolicyScope, parseFilterPolicy, parseFilterPolicyScope, type FilterPolicy } from './filter-policy.js'
import { parseArn } from './arn.js'
import { snsInvalidParameter } from './errors.js'

export const SETTABLE_SUBSCRIPTION_ATTRIBUTES = ['RawMessageDelivery', 'FilterPolicy', 'FilterPolicyScope', 'RedrivePolicy', 'DeliveryPolicy', 'SubscriptionRoleArn'] as const

/** Applies one attribute to a copy of the stored ones; throws InvalidParameter as AWS would. */
export function applySubscriptionAttribute(current: Record<string, string>, name: string, value: string): Record<string, string> {
  if (!(SETTABLE_SUBSCRIPTION_ATTRIBUTES as readonly string[]).includes(name)) throw snsInvalidParameter('Invalid parameter: AttributeName')
  const next = { ...current }
  switch (name) {
    case 'RawMessageDelivery': {
      const v = value.toLowerCase()
      if (v !== 'true' && v !== 'false') throw snsInvalidParameter('Invalid parameter: RawMessageDelivery: Invalid value [' + value + ']. Must be true or false.')
      next.RawMessageDelivery = v
      break
    }
    case 'FilterPolicy':
      if (value.trim() === '') delete next.FilterPolicy
      else next.FilterPolicy = value
      break
    case 'FilterPolicyScope':
      wrap(() => parseFilterPolicyScope(value))
      next.FilterPolicyScope = value
      break
    case 'RedrivePolicy':
      if (value.trim() === '') delete next.RedrivePolicy
      else {
        redriveTarget(value)
        next.RedrivePolicy = value
      }
      break
    case 'DeliveryPolicy':
      try {
        JSON.parse(value)
      } catch {
        throw snsInvalidParameter('Invalid parameter: DeliveryPolicy')
      }
      next.DeliveryPolicy = value
      break
    default:
      next[name] = value
  }
  compiledFilter(next)
  return next
}

/** The subscription's filter, checked; null when it has none. */
export function compiledFilter(attributes: Record<string, string>): FilterPolicy | null {
  if (attributes.FilterPolicy === undefined) return null
  const scope = wrap(() => parseFilterPolicyScope(attributes.FilterPolicyScope ?? 'MessageAttributes'))
  return wrap(() => parseFilterPolicy(attributes.FilterPolicy ?? '', scope))
}

/** The dead-letter queue ARN of a `{"deadLetterTargetArn": "arn:aws:sqs:…"}` redrive policy. */
export function redriveTarget(policy: string): string {
  let parsed: unknown
  try {
    parsed = JSON.parse(policy)
  } catch {
    throw snsInvalidParameter('Invalid parameter: RedrivePolicy: Redrive policy is not a valid JSON object')
  }
  const target = (parsed as { deadLetterTargetArn?: unknown } | null)?.deadLetterTargetArn
  if (typeof target !== 'string' || parseArn(target)?.service !== 'sqs') {
    throw snsInvalidParameter('Invalid parameter: RedrivePolicy: deadLetterTargetArn must be an SQS queue ARN')
  }
  return target
}

function wrap<T>(f: () => T): T {
  try {
    return f()
  } catch (e) {
    if (e instanceof InvalidFilterPolicy || e instanceof InvalidFilterPolicyScope) throw snsInvalidParameter(e.message)
    throw e
  }
}
