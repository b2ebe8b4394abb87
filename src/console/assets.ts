// The console's static files, bundled as strings so tsx on Node and wrangler's Worker bundle serve
// the same bytes with no file system and no network: the stylesheet, and the browser code of
// src/console/browser/ as one module (`npm run build:console`). ASSET_HASH names their directory:
// it changes whenever any byte changes, which is what lets the assets be cached as immutable.
import { CONSOLE_JS } from './client.generated.js'
import { CONSOLE_CSS } from './style.js'

export interface Asset {
  body: string
  contentType: string
}

export const ASSETS: Readonly<Record<string, Asset>> = {
  'console.css': { body: CONSOLE_CSS, contentType: 'text/css; charset=utf-8' },
  'main.js': { body: CONSOLE_JS, contentType: 'text/javascript; charset=utf-8' },
}

/** FNV-1a over every asset: synchronous and dependency-free; a cache key, not a security hash. */
function fnv1a(text: string): string {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h.toString(16).padStart(8, '0')
}

export const ASSET_HASH = fnv1a(Object.entries(ASSETS).map(([name, a]) => name + '\0' + a.body).join('\0'))
export const ASSET_BASE = `/console/assets/${ASSET_HASH}`
