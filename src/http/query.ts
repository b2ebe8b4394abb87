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
