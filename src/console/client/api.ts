// Browser module /console/assets/<hash>/api.js: every API call of the console. The token and the
// tenant live in sessionStorage (gone with the tab) and travel only in request headers, never in
// a URL, so they cannot leak through history, logs or a Referer.
export const API_JS = String.raw`
const TOKEN = 'queen.console.token'
const TENANT = 'queen.console.tenant'
let settings = null

export async function loadSettings() {
  if (!settings) settings = await (await fetch('/console/config.json', { cache: 'no-store' })).json()
  return settings
}

export const session = {
  token: () => sessionStorage.getItem(TOKEN) || '',
  tenant: () => sessionStorage.getItem(TENANT) || '',
  save(token, tenant) {
    if (token) sessionStorage.setItem(TOKEN, token)
    else sessionStorage.removeItem(TOKEN)
    if (tenant) sessionStorage.setItem(TENANT, tenant)
    else sessionStorage.removeItem(TENANT)
  },
}

export class ApiError extends Error {
  constructor(status, body, retryAfter = null) {
    super((body && body.error) || ('HTTP ' + status))
    this.status = status
    this.body = body
    /** Seconds the broker asked us to wait (Retry-After on a 503), or null. */
    this.retryAfter = retryAfter
  }
}

export async function api(path, options = {}) {
  const headers = { accept: 'application/json' }
  if (session.token()) headers.authorization = 'Bearer ' + session.token()
  if (settings.tenancyHeader && session.tenant()) headers[settings.tenancyHeader] = session.tenant()
  const init = { method: options.method || 'GET', headers, cache: 'no-store' }
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json'
    init.body = JSON.stringify(options.body)
  }
  const res = await fetch(path, init)
  const text = await res.text()
  let body = null
  try {
    body = text ? JSON.parse(text) : null
  } catch {
    body = text
  }
  if (!res.ok) throw new ApiError(res.status, body, Number(res.headers.get('retry-after')) || null)
  return body
}

/** Path segment encoding for names that may hold '/', '?' or '#'. */
export const seg = (name) => encodeURIComponent(name)
`
