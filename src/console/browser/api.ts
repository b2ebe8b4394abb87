// Every API call of the console. The token and the tenant live in sessionStorage (gone with the
// tab) and travel only in request headers, never in a URL, so they cannot leak through history,
// logs or a Referer. The calls still in flight are kept by name, so a view that is not drawn yet
// can say what it is waiting for.
import type { ConsoleSettings } from '../settings.js'

const TOKEN = 'queen.console.token'
const TENANT = 'queen.console.tenant'
let settings: Promise<ConsoleSettings> | null = null

const inFlight = new Map<number, string>()
let nextCall = 0
const watchers = new Set<(calls: string[]) => void>()

function announce() {
  const calls = [...inFlight.values()]
  for (const watcher of watchers) watcher(calls)
}

/** Runs work under a name ("GET /api/v1/..."), which stays in the in-flight list until it settles. */
async function tracked<T>(name: string, work: () => Promise<T>): Promise<T> {
  const id = nextCall++
  inFlight.set(id, name)
  announce()
  try {
    return await work()
  } finally {
    inFlight.delete(id)
    announce()
  }
}

/** Calls watcher with the requests in flight now and whenever that list changes, until the returned stop() is called. */
export function watchCalls(watcher: (calls: string[]) => void): () => void {
  watchers.add(watcher)
  watcher([...inFlight.values()])
  return () => {
    watchers.delete(watcher)
  }
}

/** The broker's console settings, fetched once; a failed fetch is asked again by the next caller. */
export function loadSettings(): Promise<ConsoleSettings> {
  if (!settings) {
    settings = tracked('GET /console/config.json', async () => (await fetch('/console/config.json', { cache: 'no-store' })).json() as Promise<ConsoleSettings>)
    settings.catch(() => {
      settings = null
    })
  }
  return settings
}

export const session = {
  token: (): string => sessionStorage.getItem(TOKEN) || '',
  tenant: (): string => sessionStorage.getItem(TENANT) || '',
  save(token: string, tenant: string): void {
    if (token) sessionStorage.setItem(TOKEN, token)
    else sessionStorage.removeItem(TOKEN)
    if (tenant) sessionStorage.setItem(TENANT, tenant)
    else sessionStorage.removeItem(TENANT)
  },
}

/** The error envelope's `error` text when the body is one, else "HTTP <status>". */
function reported(status: number, body: unknown): string {
  const error = body !== null && typeof body === 'object' ? (body as { error?: unknown }).error : undefined
  return error ? String(error) : 'HTTP ' + status
}

export class ApiError extends Error {
  readonly status: number
  readonly body: unknown
  /** Seconds the broker asked us to wait (Retry-After on a 503), or null. */
  readonly retryAfter: number | null

  constructor(status: number, body: unknown, retryAfter: number | null = null) {
    super(reported(status, body))
    this.status = status
    this.body = body
    this.retryAfter = retryAfter
  }
}

/** The HTTP status a failure carries, or undefined for a script or network failure. */
export const statusOf = (error: unknown): number | undefined => (error instanceof ApiError ? error.status : undefined)

/** A failure's text: the envelope's message for an API refusal, the error's own message otherwise. */
export function messageOf(error: unknown): string {
  return String((error instanceof Error ? error.message : '') || error)
}

export interface CallOptions {
  method?: string
  /** Sent as JSON; undefined sends no body. */
  body?: unknown
}

/**
 * One API call. The answer is trusted to have the shape T the caller names: the console reads only
 * routes of this broker, whose answers their own tests hold to the documented shapes.
 */
export function api<T = unknown>(path: string, options: CallOptions = {}): Promise<T> {
  const method = options.method || 'GET'
  return tracked(method + ' ' + path, async () => {
    const { tenancyHeader } = await loadSettings()
    const headers: Record<string, string> = { accept: 'application/json' }
    if (session.token()) headers.authorization = 'Bearer ' + session.token()
    if (tenancyHeader && session.tenant()) headers[tenancyHeader] = session.tenant()
    const init: RequestInit = { method, headers, cache: 'no-store' }
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json'
      init.body = JSON.stringify(options.body)
    }
    const res = await fetch(path, init)
    const text = await res.text()
    let body: unknown = null
    try {
      body = text ? JSON.parse(text) : null
    } catch {
      body = text
    }
    if (!res.ok) throw new ApiError(res.status, body, Number(res.headers.get('retry-after')) || null)
    return body as T
  })
}

/** Path segment encoding for names that may hold '/', '?' or '#'. */
export const seg = (name: string | number): string => encodeURIComponent(name)
