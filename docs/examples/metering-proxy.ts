// A metering proxy in front of Queen Edge (docs/metering-proxy.md): it authenticates its own API
// keys, injects the tenancy header so a caller can never choose its tenant, forwards the request
// unchanged, and records one usage event per request, classified by the broker's status and
// error code. A second function polls the cached per-queue numbers for storage billing.
// Plain fetch, no dependencies: it runs on Node 20+, Workers, Deno and Bun. An example to adapt,
// not part of the broker (test/metering-proxy.test.ts runs it against a real one).

/** success: 2xx, business outcomes included. client_error: 4xx, deterministic, never retried.
 *  transient: 503 (or the upstream unreachable), safe to retry after Retry-After.
 *  server_error: 500, a broker fault or misconfiguration; not the caller's doing, not transient. */
export type Outcome = 'success' | 'client_error' | 'transient' | 'server_error'

export interface Classified {
  outcome: Outcome
  /** The envelope's `code` (`invalid_json`, `db_unavailable`, …), null on success or without one. */
  code: string | null
  /** From Retry-After, for transient answers. */
  retryAfterMs: number | null
}

export function classify(status: number, body: unknown, retryAfter: string | null): Classified {
  const code = typeof body === 'object' && body !== null && typeof (body as { code?: unknown }).code === 'string' ? (body as { code: string }).code : null
  const seconds = retryAfter !== null && /^\d+$/.test(retryAfter) ? Number(retryAfter) : null
  if (status >= 200 && status < 300) return { outcome: 'success', code: null, retryAfterMs: null }
  if (status >= 400 && status < 500) return { outcome: 'client_error', code, retryAfterMs: null }
  if (status === 503) return { outcome: 'transient', code, retryAfterMs: (seconds ?? 1) * 1000 }
  return { outcome: 'server_error', code, retryAfterMs: null }
}

export interface MeterEvent extends Classified {
  tenant: string
  method: string
  path: string
  status: number
  requestBytes: number
  responseBytes: number
  attempts: number
}

export interface ProxyOptions {
  /** The broker's base URL, e.g. http://127.0.0.1:6632. */
  upstream: string
  /** Who pays for this request; null answers 401 without reaching the broker. */
  tenantOf(request: Request): string | null | Promise<string | null>
  record(event: MeterEvent): void
  /** The broker's QUEEN_TENANCY_HEADER, when tenancy is on. */
  tenantHeader?: string
  /** Extra attempts on a 503, each after its Retry-After. The broker makes every 5xx safe to repeat. */
  retries503?: number
  fetch?: typeof fetch
  sleep?: (ms: number) => Promise<void>
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers } })

const HOP_BY_HOP = ['host', 'connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authorization']

export function meteringProxy(options: ProxyOptions): (request: Request) => Promise<Response> {
  const send = options.fetch ?? fetch
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((done) => setTimeout(done, ms)))
  return async (request) => {
    const url = new URL(request.url)
    const tenant = await options.tenantOf(request)
    if (tenant === null) return json(401, { error: 'Unknown API key', code: 'unauthenticated' })
    const headers = new Headers(request.headers)
    // Hop-by-hop headers belong to the caller's connection, not to the one to the broker.
    for (const name of HOP_BY_HOP) headers.delete(name)
    if (options.tenantHeader) headers.set(options.tenantHeader, tenant)
    // Buffered once so a retry can re-send it; the broker caps bodies anyway (MAX_BODY_BYTES).
    const body = request.method === 'GET' || request.method === 'HEAD' ? null : new Uint8Array(await request.arrayBuffer())
    let attempts = 0
    for (;;) {
      attempts++
      let upstream: Response
      try {
        upstream = await send(options.upstream + url.pathname + url.search, { method: request.method, headers, body, signal: request.signal })
      } catch {
        // No answer at all: as transient as a 503, and the caller should hear it the same way.
        upstream = json(503, { error: 'Upstream unreachable', code: 'upstream_unavailable' }, { 'retry-after': '1' })
      }
      const bytes = new Uint8Array(await upstream.arrayBuffer())
      let parsed: unknown = null
      if (upstream.status >= 400) {
        try {
          parsed = JSON.parse(new TextDecoder().decode(bytes))
        } catch {
          parsed = null
        }
      }
      const verdict = classify(upstream.status, parsed, upstream.headers.get('retry-after'))
      if (verdict.outcome === 'transient' && attempts <= (options.retries503 ?? 0)) {
        await sleep(verdict.retryAfterMs!)
        continue
      }
      options.record({ tenant, method: request.method, path: url.pathname, status: upstream.status, requestBytes: body?.byteLength ?? 0, responseBytes: bytes.byteLength, attempts, ...verdict })
      const out = new Headers(upstream.headers)
      out.delete('content-length')
      out.delete('content-encoding')
      return new Response(upstream.status === 204 ? null : bytes, { status: upstream.status, headers: out })
    }
  }
}

export interface QueueUsage {
  queue: string
  partitions: number
  /** Retained messages (not the backlog). */
  messages: number
  pending: number
  processing: number
  retainedBytes: number
}

export interface UsageSnapshot {
  /** Seconds since the oldest cached row was computed; -1 when never. */
  statsAge: number
  /** statsAge known and at most maxAgeSeconds: bill on it; otherwise the lanes are not running. */
  fresh: boolean
  queues: QueueUsage[]
}

/** One GET /api/v1/resources/queues?stats=cached: reads the stats table only, no partition rows. */
export async function pollUsage(
  upstream: string,
  options: { headers?: Record<string, string>; maxAgeSeconds?: number; fetch?: typeof fetch } = {},
): Promise<UsageSnapshot> {
  const res = await (options.fetch ?? fetch)(`${upstream}/api/v1/resources/queues?stats=cached`, { headers: options.headers })
  if (!res.ok) throw new Error(`usage poll answered ${res.status}: ${await res.text()}`)
  const body = (await res.json()) as {
    statsAge: number
    queues: { name: string; partitions: number; retainedBytes: number; messages: { total: number; pending: number; processing: number } }[]
  }
  return {
    statsAge: body.statsAge,
    fresh: body.statsAge >= 0 && body.statsAge <= (options.maxAgeSeconds ?? 180),
    queues: body.queues.map((q) => ({
      queue: q.name,
      partitions: q.partitions,
      messages: q.messages.total,
      pending: q.messages.pending,
      processing: q.messages.processing,
      retainedBytes: q.retainedBytes,
    })),
  }
}
