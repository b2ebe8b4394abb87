// The from/to query parameters of the status and analytics reads: two optional instants, the last
// hour by default.
import { badRequest } from '../errors.js'
import { instant } from './query-schema.js'

const HOUR_MS = 3_600_000

/** from/to; `to` first, the order the time range has always been read in. */
export const timeRangeShape = { to: instant().optional(), from: instant().optional() }

/** from/to as ISO instants, defaulting to the last hour; from after to is a 400. */
export function timeRange(q: { from?: string | undefined; to?: string | undefined }): { from: string; to: string } {
  const to = q.to ?? new Date(Date.now()).toISOString()
  const from = q.from ?? new Date(Date.parse(to) - HOUR_MS).toISOString()
  if (Date.parse(from) > Date.parse(to)) throw badRequest('from must not be after to')
  return { from, to }
}
