// CORS_ORIGINS's grammar, apart from the middleware (./cors.ts) so the configuration schema can use it
// without pulling the HTTP layer into every importer of src/config.ts (the console's browser code).

/** The parsed CORS_ORIGINS: '*' or the exact origins allowed. */
export type CorsOrigins = '*' | readonly string[]

const ORIGIN = /^https?:\/\/[^/\s?#]+$/

/** Parses CORS_ORIGINS: `*` alone, or a comma list of origins (scheme://host[:port], no path). */
export function parseCorsOrigins(value: string): CorsOrigins | string {
  const entries = value.split(',').map((e) => e.trim()).filter((e) => e !== '')
  if (entries.length === 0) return 'must name at least one origin, or *'
  if (entries.includes('*')) return entries.length === 1 ? '*' : 'must be * alone or a list of origins, not both'
  const bad = entries.find((e) => !ORIGIN.test(e))
  if (bad !== undefined) return `entries must be origins like https://app.example (scheme://host[:port], no path); got ${JSON.stringify(bad.slice(0, 80))}`
  return entries.map((e) => e.toLowerCase())
}
