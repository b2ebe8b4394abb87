// Instants in hand-parsed bodies (API §1.5). Query parameters are parsed by the zod helpers of
// http/query-schema.ts; this is the throwing form for code that checks a value by hand.
import { badRequest } from '../errors.js'
import { instantOf } from './query-schema.js'

export { INT_MAX } from './query-schema.js'

export function parseInstant(value: string, name: string): string {
  const iso = instantOf(value)
  if (iso === null) throw badRequest(`${name} must be an ISO-8601 timestamp`)
  return iso
}

// TEMPORARY until every family reads its query through a schema.
export class Query {
  private readonly params: URLSearchParams

  constructor(url: string) {
    this.params = new URL(url).searchParams
  }

  string(name: string): string | undefined {
    const value = this.params.get(name)
    return value === null || value === '' ? undefined : value
  }

  bool(name: string, fallback: boolean): boolean {
    const value = this.string(name)
    if (value === undefined) return fallback
    if (/^(true|1)$/i.test(value)) return true
    if (/^(false|0)$/i.test(value)) return false
    throw badRequest(`${name} must be true, false, 1 or 0`)
  }

  /** An integer ≥ min; above max it is clamped (the parameters this is used for are documented so). */
  int(name: string, fallback: number, min: number, max: number): number {
    const value = this.string(name)
    if (value === undefined) return fallback
    if (!/^\d+$/.test(value)) throw badRequest(`${name} must be an integer`)
    const n = Number(value)
    if (n < min) throw badRequest(`${name} must be at least ${min}`)
    return Math.min(n, max)
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const value = this.string(name)
    if (value === undefined) return fallback
    if (!(allowed as readonly string[]).includes(value)) throw badRequest(`${name} must be one of ${allowed.join(', ')}`)
    return value as T
  }
}

