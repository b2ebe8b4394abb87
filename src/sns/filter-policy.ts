// An SNS subscription filter policy, parsed and checked once when a subscription stores it, so a
// publish only evaluates (src/sns/filter-match.ts) and never meets a policy it cannot read. The
// grammar and the ceilings are AWS's: a policy SNS refuses is refused here with the same error name
// (InvalidParameter), because a provisioner that passes here and fails against AWS, or the reverse,
// is the drift a facade exists to avoid.

/** Where a policy looks: the message attributes (AWS's default) or the JSON body. */
export type FilterPolicyScope = 'MessageAttributes' | 'MessageBody'

export const FILTER_POLICY_SCOPES: readonly FilterPolicyScope[] = ['MessageAttributes', 'MessageBody']

/** AWS's ceilings: five keys, 150 value combinations, 256 KB of policy text, numbers within ±1e9. */
export const FILTER_POLICY_LIMITS = {
  maxKeys: 5,
  maxCombinations: 150,
  maxBytes: 256 * 1024,
  maxNumber: 1e9,
} as const

/** A number scaled to AWS's five decimal digits, so 0.1 + 0.2 equals 0.3 as the policy means it. */
export type Fixed5 = number

export type Scalar = string | number | boolean | null

export type Condition =
  | { kind: 'exact'; value: Scalar }
  | { kind: 'prefix'; value: string }
  | { kind: 'suffix'; value: string }
  | { kind: 'equalsIgnoreCase'; value: string }
  | { kind: 'numeric'; lower?: { value: Fixed5; inclusive: boolean }; upper?: { value: Fixed5; inclusive: boolean } }
  | { kind: 'exists'; value: boolean }
  | { kind: 'anythingBut'; values: Scalar[] }
  | { kind: 'anythingButPrefix'; value: string }
  | { kind: 'anythingButSuffix'; value: string }
  | { kind: 'anythingButIgnoreCase'; values: string[] }

/** One key's test: the path to it (one segment under attribute scope) and its OR-ed conditions. */
export interface KeyTest {
  path: string[]
  conditions: Condition[]
}

/**
 * A checked policy: `$or` expanded into branches, each an AND of key tests. A message matches
 * when some branch matches; a policy with no branches matches everything.
 */
export interface FilterPolicy {
  scope: FilterPolicyScope
  branches: KeyTest[][]
}

/** A policy AWS would refuse; the message becomes the `InvalidParameter` error's text. */
export class InvalidFilterPolicy extends Error {
  constructor(reason: string) {
    super(`Invalid parameter: FilterPolicy: ${reason}`)
    this.name = 'InvalidFilterPolicy'
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Scales a policy or message number to five decimals; non-finite numbers are refused by callers. */
export function toFixed5(n: number): Fixed5 {
  return Math.round(n * 1e5)
}

function policyNumber(v: unknown, where: string): Fixed5 {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new InvalidFilterPolicy(`${where} must be a number`)
  if (Math.abs(v) > FILTER_POLICY_LIMITS.maxNumber) {
    throw new InvalidFilterPolicy(`${where}: numbers must lie between -1000000000 and 1000000000`)
  }
  return toFixed5(v)
}

function policyString(v: unknown, operator: string): string {
  if (typeof v !== 'string') throw new InvalidFilterPolicy(`${operator} match pattern must be a string`)
  return v
}

/** `{"numeric": [">", 0, "<=", 10]}`: one comparison, or a lower bound followed by an upper bound. */
function numericCondition(spec: unknown): Condition {
  if (!Array.isArray(spec) || (spec.length !== 2 && spec.length !== 4)) {
    throw new InvalidFilterPolicy('numeric match must be an array of one or two comparisons')
  }
  const op = spec[0]
  const first = policyNumber(spec[1], 'numeric')
  if (spec.length === 2) {
    switch (op) {
      case '=':
        return { kind: 'numeric', lower: { value: first, inclusive: true }, upper: { value: first, inclusive: true } }
      case '>':
      case '>=':
        return { kind: 'numeric', lower: { value: first, inclusive: op === '>=' } }
      case '<':
      case '<=':
        return { kind: 'numeric', upper: { value: first, inclusive: op === '<=' } }
      default:
        throw new InvalidFilterPolicy(`Unrecognized numeric range operator: ${JSON.stringify(op)}`)
    }
  }
  const op2 = spec[2]
  const second = policyNumber(spec[3], 'numeric')
  if (op !== '>' && op !== '>=') throw new InvalidFilterPolicy('Bad numeric range operator: a range starts with > or >=')
  if (op2 !== '<' && op2 !== '<=') throw new InvalidFilterPolicy('Bad numeric range operator: a range ends with < or <=')
  if (first >= second) throw new InvalidFilterPolicy('Bottom must be less than top')
  return {
    kind: 'numeric',
    lower: { value: first, inclusive: op === '>=' },
    upper: { value: second, inclusive: op2 === '<=' },
  }
}

/** `anything-but` takes a value, a list of values, or one `prefix` / `suffix` / `equals-ignore-case`. */
function anythingButCondition(spec: unknown): Condition {
  if (typeof spec === 'string') return { kind: 'anythingBut', values: [spec] }
  if (typeof spec === 'number') return { kind: 'anythingBut', values: [policyNumber(spec, 'anything-but')] }
  if (Array.isArray(spec)) {
    if (spec.length === 0) throw new InvalidFilterPolicy('anything-but list must not be empty')
    const values = spec.map((v): Scalar => {
      if (typeof v === 'string') return v
      if (typeof v === 'number') return policyNumber(v, 'anything-but')
      throw new InvalidFilterPolicy('anything-but list may hold only strings and numbers')
    })
    return { kind: 'anythingBut', values }
  }
  if (isObject(spec)) {
    const keys = Object.keys(spec)
    if (keys.length !== 1) throw new InvalidFilterPolicy('anything-but object must hold exactly one operator')
    const [name] = keys as [string]
    const value = spec[name]
    if (name === 'prefix') return { kind: 'anythingButPrefix', value: nonEmpty(policyString(value, 'prefix'), 'prefix') }
    if (name === 'suffix') return { kind: 'anythingButSuffix', value: nonEmpty(policyString(value, 'suffix'), 'suffix') }
    if (name === 'equals-ignore-case') {
      const list = Array.isArray(value) ? value : [value]
      if (list.length === 0) throw new InvalidFilterPolicy('anything-but equals-ignore-case list must not be empty')
      return { kind: 'anythingButIgnoreCase', values: list.map((v) => policyString(v, 'equals-ignore-case')) }
    }
    throw new InvalidFilterPolicy(`Unsupported anything-but pattern: ${name}`)
  }
  throw new InvalidFilterPolicy('anything-but must be a string, a number, a list or an object')
}

function nonEmpty(s: string, operator: string): string {
  if (s === '') throw new InvalidFilterPolicy(`${operator} match pattern must not be empty`)
  return s
}

/** One element of a key's array: a literal, or an object naming exactly one operator. */
function condition(item: unknown): Condition {
  if (item === null || typeof item === 'string' || typeof item === 'boolean') return { kind: 'exact', value: item }
  if (typeof item === 'number') return { kind: 'exact', value: policyNumber(item, 'value') }
  if (Array.isArray(item)) throw new InvalidFilterPolicy('Match value must be a string, number, true, false, null or an operator object')
  if (!isObject(item)) throw new InvalidFilterPolicy('Match value must be a string, number, true, false, null or an operator object')
  const keys = Object.keys(item)
  if (keys.length !== 1) throw new InvalidFilterPolicy('An operator object must hold exactly one operator')
  const [name] = keys as [string]
  const spec = item[name]
  switch (name) {
    case 'prefix':
      return { kind: 'prefix', value: nonEmpty(policyString(spec, 'prefix'), 'prefix') }
    case 'suffix':
      return { kind: 'suffix', value: nonEmpty(policyString(spec, 'suffix'), 'suffix') }
    case 'equals-ignore-case':
      return { kind: 'equalsIgnoreCase', value: policyString(spec, 'equals-ignore-case') }
    case 'numeric':
      return numericCondition(spec)
    case 'exists':
      if (typeof spec !== 'boolean') throw new InvalidFilterPolicy('exists match pattern must be either true or false.')
      return { kind: 'exists', value: spec }
    case 'anything-but':
      return anythingButCondition(spec)
    default:
      throw new InvalidFilterPolicy(`Unrecognized match type ${name}`)
  }
}

/** AWS recognises `$or` only as a list of at least two policy objects; otherwise it is a plain key. */
function isOrClause(key: string, value: unknown): value is Record<string, unknown>[] {
  return key === '$or' && Array.isArray(value) && value.length >= 2 && value.every(isObject)
}

/**
 * Expands one policy object into its AND-branches. Every `$or` multiplies the branches it sits in,
 * so `{a:[1], $or:[{b:[2]},{c:[3]}]}` becomes `[[a,b],[a,c]]`.
 */
function expand(node: Record<string, unknown>, prefix: string[], scope: FilterPolicyScope): KeyTest[][] {
  let branches: KeyTest[][] = [[]]
  for (const [key, value] of Object.entries(node)) {
    let alternatives: KeyTest[][]
    if (isOrClause(key, value)) {
      alternatives = value.flatMap((option) => {
        if (Object.keys(option).length === 0) throw new InvalidFilterPolicy('$or alternatives must not be empty')
        return expand(option, prefix, scope)
      })
    } else if (Array.isArray(value)) {
      if (value.length === 0) throw new InvalidFilterPolicy(`Empty arrays are not allowed (key ${JSON.stringify(key)})`)
      alternatives = [[{ path: [...prefix, key], conditions: value.map(condition) }]]
    } else if (isObject(value)) {
      if (scope === 'MessageAttributes') {
        throw new InvalidFilterPolicy('Filter policy scope MessageAttributes does not support nested filter policy')
      }
      if (Object.keys(value).length === 0) throw new InvalidFilterPolicy(`Empty objects are not allowed (key ${JSON.stringify(key)})`)
      alternatives = expand(value, [...prefix, key], scope)
    } else {
      throw new InvalidFilterPolicy(`Match value of ${JSON.stringify(key)} must be an array or an object`)
    }
    branches = branches.flatMap((b) => alternatives.map((alt) => [...b, ...alt]))
    // A policy whose $or nesting explodes is refused long before the product is built in full.
    if (branches.length > FILTER_POLICY_LIMITS.maxCombinations) {
      throw new InvalidFilterPolicy(`Filter policy is too complex: more than ${FILTER_POLICY_LIMITS.maxCombinations} combinations`)
    }
  }
  return branches
}

/** AWS's complexity: per branch, the product of its arrays' lengths, summed over the branches. */
function combinations(branches: KeyTest[][]): number {
  return branches.reduce((sum, branch) => sum + branch.reduce((p, t) => p * t.conditions.length, 1), 0)
}

/**
 * Parses and checks the `FilterPolicy` attribute's text. Throws InvalidFilterPolicy for anything
 * AWS refuses. An empty string or `{}` is a policy that lets everything through, which is how a
 * subscription's filter is removed.
 */
export function parseFilterPolicy(text: string, scope: FilterPolicyScope = 'MessageAttributes'): FilterPolicy {
  if (new TextEncoder().encode(text).length > FILTER_POLICY_LIMITS.maxBytes) {
    throw new InvalidFilterPolicy('Filter policy is too large: the limit is 256 KB')
  }
  if (text.trim() === '') return { scope, branches: [] }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new InvalidFilterPolicy('Filter policy is not valid JSON')
  }
  if (!isObject(parsed)) throw new InvalidFilterPolicy('Filter policy must be a JSON object')
  if (Object.keys(parsed).length === 0) return { scope, branches: [] }
  const branches = expand(parsed, [], scope)
  for (const branch of branches) {
    const keys = new Set(branch.map((t) => t.path.join('\u0000')))
    if (keys.size > FILTER_POLICY_LIMITS.maxKeys) {
      throw new InvalidFilterPolicy(`Filter policy can not have more than ${FILTER_POLICY_LIMITS.maxKeys} keys`)
    }
  }
  const total = combinations(branches)
  if (total > FILTER_POLICY_LIMITS.maxCombinations) {
    throw new InvalidFilterPolicy(`Filter policy is too complex: ${total} combinations, the limit is ${FILTER_POLICY_LIMITS.maxCombinations}`)
  }
  return { scope, branches }
}

/** Reads the `FilterPolicyScope` attribute; anything but AWS's two values is InvalidParameter. */
export function parseFilterPolicyScope(value: string): FilterPolicyScope {
  if ((FILTER_POLICY_SCOPES as readonly string[]).includes(value)) return value as FilterPolicyScope
  throw new InvalidFilterPolicyScope(value)
}

export class InvalidFilterPolicyScope extends Error {
  constructor(value: string) {
    super(`Invalid parameter: FilterPolicyScope: Invalid value [${value}]. Please use either MessageBody or MessageAttributes`)
    this.name = 'InvalidFilterPolicyScope'
  }
}
