// Reading an action's input, which arrives typed from the JSON protocol and as strings from the
// Query protocol (./query-decode.ts): every reader accepts both, and refuses anything else with
// AWS's own error, so a malformed member is a 400 in AWS's shape, never a crash.
import { AwsError, missingParameter } from './errors.js'

export type Input = Record<string, unknown>

export function optionalString(input: Input, name: string): string | undefined {
  const value = input[name]
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string') throw new AwsError('InvalidParameterValue', `${name} must be a string`)
  return value
}

export function requiredString(input: Input, name: string): string {
  const value = optionalString(input, name)
  if (value === undefined) throw missingParameter(name)
  return value
}

export function optionalInt(input: Input, name: string, min: number, max: number): number | undefined {
  const value = input[name]
  if (value === undefined || value === null || value === '') return undefined
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : NaN
  if (!Number.isInteger(n)) throw new AwsError('InvalidParameterValue', `${name} must be an integer`)
  if (n < min || n > max) throw new AwsError('InvalidParameterValue', `Value ${n} for parameter ${name} is invalid. Reason: must be between ${min} and ${max}.`)
  return n
}

export function optionalBool(input: Input, name: string): boolean | undefined {
  const value = input[name]
  if (value === undefined || value === null) return undefined
  if (typeof value === 'boolean') return value
  if (value === 'true' || value === 'false') return value === 'true'
  throw new AwsError('InvalidParameterValue', `${name} must be true or false`)
}

export function stringList(input: Input, name: string): string[] {
  const value = input[name]
  if (value === undefined || value === null) return []
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw new AwsError('InvalidParameterValue', `${name} must be a list of strings`)
  return value as string[]
}

export function stringMap(input: Input, name: string): Record<string, string> {
  const value = input[name]
  if (value === undefined || value === null) return {}
  if (typeof value !== 'object' || Array.isArray(value)) throw new AwsError('InvalidParameterValue', `${name} must be a map`)
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') throw new AwsError('InvalidParameterValue', `${name}.${k} must be a string`)
    out[k] = v
  }
  return out
}

export function structList(input: Input, name: string): Input[] {
  const value = input[name]
  if (value === undefined || value === null) return []
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'object' && v !== null && !Array.isArray(v))) {
    throw new AwsError('InvalidParameterValue', `${name} must be a list of structures`)
  }
  return value as Input[]
}
