// The operator console's pages (docs/console.md): the shell at / and every /console/... path,
// its settings, and its bundled assets. All are pages (http/page.ts): no guard, no database; the
// data comes from the API routes the browser calls with the operator's token and tenant.
import type { Context } from 'hono'
import { ASSETS, ASSET_BASE, ASSET_HASH } from '../console/assets.js'
import { consoleSettings } from '../console/settings.js'
import { shellHtml } from '../console/shell.js'
import { page, type PageDef } from '../http/page.js'
import type { AppEnv } from '../http/env.js'

const SHELL = shellHtml(ASSET_BASE)
// The shell and settings may change with a deploy or a variable; the hashed assets never do.
const REVALIDATE = 'no-cache'
const IMMUTABLE = 'public, max-age=31536000, immutable'

// Pages send no page-specific framing rules elsewhere, so the console sets its own: it is never
// meant to be framed, and it loads nothing from other origins.
const SHELL_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': REVALIDATE,
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'content-security-policy': "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
}

const shell = (c: Context<AppEnv>) => c.body(SHELL, 200, SHELL_HEADERS)

function asset(c: Context<AppEnv>) {
  const found = c.req.param('hash') === ASSET_HASH ? ASSETS[c.req.param('file') ?? ''] : undefined
  // A stale hash (a shell from before a deploy) is a 404, not today's file under an old name.
  if (!found) return c.json({ error: 'Not found', code: 'not_found' }, 404)
  return c.body(found.body, 200, { 'content-type': found.contentType, 'cache-control': IMMUTABLE, 'x-content-type-options': 'nosniff' })
}

export function consolePages(): PageDef[] {
  return [
    page('/', shell),
    page('/console/config.json', (c) => c.json(consoleSettings(c.get('config')), 200, { 'cache-control': REVALIDATE })),
    page('/console/assets/:hash/:file', asset),
    page('/console', shell),
    page('/console/*', shell),
  ]
}
