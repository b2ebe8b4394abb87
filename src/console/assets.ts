// The console's static files, bundled as strings so tsx on Node and wrangler's Worker bundle serve
// the same bytes with no file system and no network. ASSET_HASH names their directory: it changes
// whenever any byte changes, which is what lets the assets be cached as immutable.
import { ACTIONS_JS } from './client/actions.js'
import { API_JS } from './client/api.js'
import { CHART_JS } from './client/chart.js'
import { DLQ_JS } from './client/dlq.js'
import { DOM_JS } from './client/dom.js'
import { EDIT_JS } from './client/edit.js'
import { GROUPS_JS } from './client/groups.js'
import { LAG_HISTORY_JS } from './client/lag-history.js'
import { LIVE_JS } from './client/live.js'
import { MAIN_JS } from './client/main.js'
import { MESSAGES_JS } from './client/messages.js'
import { PLACEMENTS_JS } from './client/placements.js'
import { QUEUE_JS } from './client/queue.js'
import { QUEUES_JS } from './client/queues.js'
import { STREAMS_JS } from './client/streams.js'
import { SINKS_JS } from './client/sinks.js'
import { SYSTEM_JS } from './client/system.js'
import { TRACES_JS } from './client/traces.js'
import { CONSOLE_CSS } from './style.js'

export interface Asset {
  body: string
  contentType: string
}

const JS = 'text/javascript; charset=utf-8'

export const ASSETS: Readonly<Record<string, Asset>> = {
  'console.css': { body: CONSOLE_CSS, contentType: 'text/css; charset=utf-8' },
  'main.js': { body: MAIN_JS, contentType: JS },
  'api.js': { body: API_JS, contentType: JS },
  'dom.js': { body: DOM_JS, contentType: JS },
  'chart.js': { body: CHART_JS, contentType: JS },
  'queues.js': { body: QUEUES_JS, contentType: JS },
  'queue.js': { body: QUEUE_JS, contentType: JS },
  'edit.js': { body: EDIT_JS, contentType: JS },
  'dlq.js': { body: DLQ_JS, contentType: JS },
  'groups.js': { body: GROUPS_JS, contentType: JS },
  'actions.js': { body: ACTIONS_JS, contentType: JS },
  'streams.js': { body: STREAMS_JS, contentType: JS },
  'sinks.js': { body: SINKS_JS, contentType: JS },
  'live.js': { body: LIVE_JS, contentType: JS },
  'messages.js': { body: MESSAGES_JS, contentType: JS },
  'traces.js': { body: TRACES_JS, contentType: JS },
  'lag-history.js': { body: LAG_HISTORY_JS, contentType: JS },
  'system.js': { body: SYSTEM_JS, contentType: JS },
  'placements.js': { body: PLACEMENTS_JS, contentType: JS },
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
