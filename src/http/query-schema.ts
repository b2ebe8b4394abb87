// zod pieces that reproduce the broker's query rules, so a route's query schema is both what the
// route validates with and what /openapi.json documents. queryObject() applies the rules that are
// about the URL (the first occurrence of a key wins, an empty value is absent); the helpers below
// apply the per-type rules with the texts clients already see ("limit must be an integer"; the
// name is prefixed by validate's fieldSpace wording). Every helper accepts a missing value.
import { z } from 'zod'

/** PostgreSQL's integer maximum: paging offsets reach SQL as integer, so larger ones are clamped to it. */
export const INT_MAX = 2_147_483_647

/** The query string as an object of first values, without empty ones. */
export function queryObject(url: string): Record<string, string> {
  const out: Record<string, string> = {}
  const seen = new Set<string>()
  for (const [key, value] of new URL(url).searchParams) {
    if (seen.has(key)) continue
    seen.add(key)
    if (value !== '') out[key] = value
  }
  return out
}

export const qString = () => z.string().optional()

/** true/1/false/0 in any case. */
export const qBool = (fallback: boolean) =>
  z
    .string()
    .regex(/^(true|1|false|0)$/i, 'must be true, false, 1 or 0')
    .transform((v) => /^(true|1)$/i.test(v))
    .optional()
    .transform((v) => v ?? fallback)
    .meta({ description: `true, false, 1 or 0; default ${fallback}` })

/**
 * Base-10 digits only, at least `min`; above `max` clamped (the parameters this is used for are
 * documented so). `floor` raises a smaller value instead of refusing it (limit=0 reads as 1).
 */
export const qInt = (fallback: number, min: number, max: number, floor = min) =>
  z
    .string()
    .regex(/^\d+$/, 'must be an integer')
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`))
    .optional()
    .transform((n) => Math.max(Math.min(n ?? fallback, max), floor))
    .meta({ description: `integer ≥ ${min}, default ${fallback}, values above ${max} read as ${max}` })

export const qOneOf = <const T extends readonly [string, ...string[]]>(allowed: T) =>
  z.enum(allowed, { error: `must be one of ${allowed.join(', ')}` })

/**
 * RFC 3339 / ISO-8601 with Z or ±hh:mm (no offset means UTC), normalised to one spelling before
 * SQL sees it; null when the text is not such an instant.
 */
export function instantOf(value: string): string | null {
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/i.exec(value)
  if (!m) return null
  const fraction = m[3] ? m[3].slice(0, 7) : ''
  if (Number.isNaN(Date.parse(`${m[1]}T${m[2]}${m[4] ?? 'Z'}`))) return null
  return `${m[1]}T${m[2]}${fraction}${(m[4] ?? 'Z').toUpperCase()}`
}

/**
 * An instant as instantOf reads it, normalised; `message` is the refusal (default: "must be an
 * ISO-8601 timestamp").
 */
export const instant = (message = 'must be an ISO-8601 timestamp') =>
  z
    .string({ error: message })
    .transform((v, ctx) => {
      const iso = instantOf(v)
      if (iso === null) {
        ctx.addIssue({ code: 'custom', message, params: { instant: true } })
        return z.NEVER
      }
      return iso
    })
    .meta({ format: 'date-time' })
