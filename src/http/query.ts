// Query parameters per API §1.5: URLSearchParams, the first occurrence of a key wins, an empty value
// is absent, booleans are true/1/false/0 (any case), integers are base-10 digits only. Anything else
// is a 400 naming the parameter, never a silent default.
import { badRequest } from '../errors.js'

/** PostgreSQL's integer maximum: paging offsets reach SQL as integer, so larger ones are clamped to it. */
export const INT_MAX = 2_147_483_647

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

/** RFC 3339 / ISO-8601 with Z or ±hh:mm (no offset means UTC), as API §1.5 accepts. */
export function parseInstant(value: string, name: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/i.exec(value)
  if (!m) throw badRequest(`${name} must be an ISO-8601 timestamp`)
  const fraction = m[3] ? m[3].slice(0, 7) : ''
  const iso = `${m[1]}T${m[2]}${fraction}${(m[4] ?? 'Z').toUpperCase()}`
  if (Number.isNaN(Date.parse(`${m[1]}T${m[2]}${m[4] ?? 'Z'}`))) throw badRequest(`${name} must be an ISO-8601 timestamp`)
  return iso
}
