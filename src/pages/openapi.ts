// GET /openapi.json and GET /docs (issue #11): the API description is not secret (Queen's is
// public), so both are pages, served without the route guard. Both are built once per app
// configuration from the full route registry and then served from memory.
import type { Context } from 'hono'
import type { Config } from '../config.js'
import type { AppEnv } from '../http/env.js'
import { page } from '../http/page.js'
import { buildDocument } from '../openapi/document.js'
import { renderReference } from '../openapi/reference-page.js'
import type { JsonSchema } from '../openapi/schema.js'
import { allRoutes } from '../routes/index.js'
import { VERSION } from '../version.js'

// The document changes only with a deploy; five minutes of caching spares nothing but is harmless.
const CACHE = 'public, max-age=300'

const built = new WeakMap<Config, { doc: JsonSchema; json: string; html: string }>()

function reference(c: Context<AppEnv>) {
  const config = c.get('config')
  let entry = built.get(config)
  if (!entry) {
    const doc = buildDocument(allRoutes(VERSION), { version: VERSION, tenancyHeader: config.QUEEN_TENANCY_HEADER, skipPaths: config.JWT_SKIP_PATHS })
    entry = { doc, json: JSON.stringify(doc), html: renderReference(doc) }
    built.set(config, entry)
  }
  return entry
}

export const openApiPages = [
  page('/openapi.json', (c) => c.body(reference(c).json, 200, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': CACHE })),
  page('/docs', (c) => c.body(reference(c).html, 200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': CACHE })),
]
