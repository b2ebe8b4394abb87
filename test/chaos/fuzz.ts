// Hostile requests for every route (issue #10 item 3), as fast-check arbitraries. Each request is a
// valid template of its route with fields replaced by hostile values (wrong types, huge and deeply
// nested values, overflowing numbers, names with '/', '%00', quotes and SQL, lone surrogates),
// unknown keys added and required ones dropped; or a raw hostile body (invalid JSON, invalid UTF-8,
// bodies over the cap, nesting thousands deep); with hostile query strings (enormous batches,
// negative and overflowing numbers, unknown options) and hostile tenant headers. Template names
// carry the request's index, so a write by a refused request can be told from a valid one's.
import fc from 'fast-check'

export const TENANT_HEADER = 'x-queen-tenant'
export const TENANT = 'fuzz'

export interface FuzzRequest {
  route: string
  method: string
  path: string
  headers: Record<string, string>
  body?: string | Uint8Array
}

const SQLISH = [
  "'; drop table queen.queues; --", "' or '1'='1", '"quoted"', "O'Brien", '\\', '$1', '%s', '%00', '%2F', '%', 'a/b', '../../etc/passwd',
  '\u0000', 'a\u0000b', '\uD800', '\uDFFF', '😀', '\u202E', ' ', '', '__QUEUE_MODE__', 'Default', 'null', 'undefined', 'NaN', '-1',
  '${jndi:ldap://x}', '<script>', '\n\r\t', 'é'.normalize('NFD'),
]
const NUMBERS = [-1, 0, 1, -0, 1.5, -2147483649, 2147483648, 2 ** 53, 2 ** 63, 2 ** 64, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 1e-300]
const NUMBER_TEXTS = ['-1', '0', '1e9', '1e999', '99999999999999999999999', '-99999999999999999999', 'NaN', 'Infinity', '0x10', '1.5', ' 1', '', 'abc', '%00', '10000000']

export const hostileString = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...SQLISH) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.constantFrom('x'.repeat(256), 'y'.repeat(5000), '😀'.repeat(200)) },
)

const deep = (depth: number, open = '{"a":', close = '}') => JSON.parse(open.repeat(depth) + '1' + close.repeat(depth)) as unknown

export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: hostileString },
  { weight: 2, arbitrary: fc.constantFrom(...NUMBERS) },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}, [null], { '': 1 }, { __proto__: 1 }, { constructor: { prototype: 1 } }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.constantFrom(deep(200), deep(200, '[', ']'), Array.from({ length: 2000 }, (_, i) => i)) },
)

const UNKNOWN_KEYS = ['__proto__', 'constructor', 'unknownOption', 'tenant', 'tenant_id', 'sql', '$where', 'id']

/** The template, each field possibly hostile, missing, or joined by unknown keys. */
function mutate(template: unknown, depth = 0): fc.Arbitrary<unknown> {
  if (Array.isArray(template)) {
    const items = template.map((t) => mutate(t, depth + 1))
    return fc.oneof(
      { weight: 4, arbitrary: items.length ? fc.tuple(...items) : fc.constant([]) },
      { weight: 1, arbitrary: fc.constant([]) },
      { weight: 1, arbitrary: hostileValue },
      { weight: 1, arbitrary: items.length ? fc.array(items[0]!, { minLength: 1, maxLength: 4 }) : fc.constant([null]) },
    )
  }
  if (template !== null && typeof template === 'object') {
    const entries = Object.entries(template as Record<string, unknown>)
    const record = fc.record(Object.fromEntries(entries.map(([k, v]) => [k, mutate(v, depth + 1)])), { requiredKeys: entries.map(([k]) => k).filter((_, i) => i % 2 === 0) })
    return fc.oneof(
      { weight: 6, arbitrary: record },
      { weight: 1, arbitrary: fc.tuple(record, fc.constantFrom(...UNKNOWN_KEYS), hostileValue).map(([r, k, v]) => Object.defineProperty({ ...(r as object) }, k, { value: v, enumerable: true, writable: true, configurable: true })) },
      { weight: depth === 0 ? 0 : 1, arbitrary: hostileValue },
    )
  }
  return fc.oneof({ weight: 5, arbitrary: fc.constant(template) }, { weight: 2, arbitrary: hostileValue })
}

const encoder = new TextEncoder()

/** encodeURIComponent that keeps a lone surrogate hostile (as the bytes of its CESU-8 form) instead of throwing. */
export function encodeSegment(s: string): string {
  try {
    return encodeURIComponent(s)
  } catch {
    return encodeURIComponent(s.replace(/[\uD800-\uDFFF]/g, '')) + '%ED%A0%80'
  }
}
const rawBodies: fc.Arbitrary<string | Uint8Array> = fc.oneof(
  fc.constantFrom('', ' ', '{', '{"items":', '[]', '[1,2]', 'null', '"text"', '12', 'true', '{"a":1}{"b":2}', '{"a":1,}', "{'a':1}", '{"a":NaN}', '{"\\u0000":1}', '{"a":"\\ud800"}'),
  fc.constant(new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d])),
  fc.constant(new Uint8Array([0xc0, 0xaf, 0xed, 0xa0, 0x80])),
  fc.constant('{"a":' + '['.repeat(50_000) + ']'.repeat(50_000) + '}'),
  fc.constant('{"items":[' + Array.from({ length: 20_000 }, () => '{"queue":"q"}').join(',') + ']}'),
  fc.constant('{"pad":"' + 'x'.repeat(300_000) + '"}'),
)

/** A path segment: the template's name, or something hostile, encoded, half-encoded or raw. */
const segment = (name: string): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constant(encodeURIComponent(name)) },
    { weight: 3, arbitrary: hostileString.map(encodeSegment) },
    { weight: 1, arbitrary: fc.constantFrom('%00', '%2F', '%2f..%2f', '..', '.', '%', '%zz', '%C0%AF', '%ED%A0%80', "'", '%27%3B%20drop', 'a%00b', '00000000-0000-0000-0000-000000000000', encodeURIComponent(name) + '/extra') },
  )

const QUERY_KEYS = ['batch', 'wait', 'timeout', 'partitions', 'autoAck', 'consumerGroup', 'subscriptionMode', 'subscriptionFrom', 'delivery', 'conflation', 'autopilot', 'leaseSeconds', 'namespace', 'task', 'queue', 'partition', 'limit', 'offset', 'from', 'to', 'status', 'stats', 'group', 'unknown', 'batch']
const query: fc.Arbitrary<string> = fc
  .array(fc.tuple(fc.constantFrom(...QUERY_KEYS), fc.oneof(fc.constantFrom(...NUMBER_TEXTS), hostileString, fc.constantFrom('true', 'false', 'yes', 'all', 'new', 'now', '2026-01-01T00:00:00Z', 'not-a-date'))), { maxLength: 5 })
  .map((pairs) => (pairs.length ? '?' + pairs.map(([k, v]) => `${k}=${encodeSegment(v)}`).join('&') : ''))

const tenantHeaders: fc.Arbitrary<Record<string, string>> = fc.oneof(
  { weight: 12, arbitrary: fc.constant({ [TENANT_HEADER]: TENANT }) },
  { weight: 1, arbitrary: fc.constant({}) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', 'a b', '../x', 'x'.repeat(300), "t'; drop", 'other', 'é', 'a,b').map((t) => ({ [TENANT_HEADER]: t })) },
)

const uuid = '0190b7a5-0000-7000-8000-000000000000'

interface Template {
  route: string
  method: string
  /** Builds the path from hostile or valid segments; `n` is the request's unique name. */
  path: (n: string) => fc.Arbitrary<string>
  body?: (n: string) => unknown
  query?: boolean
}

const TEMPLATES: Template[] = [
  { route: 'health', method: 'GET', path: () => fc.constant('/health') },
  { route: 'configure', method: 'POST', path: () => fc.constant('/api/v1/configure'), body: (n) => ({ queue: n, namespace: 'ns', task: 't', options: { leaseTime: 30, retryLimit: 3, dedupWindowSeconds: 60, encryptionEnabled: false, maxWaitTimeSeconds: 0, delayedProcessing: 0 } }) },
  { route: 'push', method: 'POST', path: () => fc.constant('/api/v1/push'), body: (n) => ({ items: [{ queue: n, partition: 'p1', transactionId: `${n}-t1`, payload: { n: 1, s: 'x' } }, { queue: n, payload: null }] }) },
  { route: 'pop', method: 'GET', path: (n) => segment(n).map((q) => `/api/v1/pop/queue/${q}`), query: true },
  { route: 'pop partition', method: 'GET', path: (n) => fc.tuple(segment(n), segment('p1')).map(([q, p]) => `/api/v1/pop/queue/${q}/partition/${p}`), query: true },
  { route: 'pop discovery', method: 'GET', path: () => fc.constant('/api/v1/pop'), query: true },
  { route: 'ack', method: 'POST', path: () => fc.constant('/api/v1/ack'), body: () => ({ transactionId: 't', partitionId: uuid, leaseId: uuid, status: 'completed', consumerGroup: null, error: 'e', offset: 0 }) },
  { route: 'ack batch', method: 'POST', path: () => fc.constant('/api/v1/ack/batch'), body: () => ({ acknowledgments: [{ transactionId: 't', partitionId: uuid, leaseId: uuid, status: 'failed', offset: 3 }], consumerGroup: 'g' }) },
  { route: 'transaction', method: 'POST', path: () => fc.constant('/api/v1/transaction'), body: (n) => ({ operations: [{ type: 'push', items: [{ queue: n, partition: 'p1', transactionId: `${n}-tx`, payload: { a: 1 } }] }, { type: 'ack', transactionId: 't', partitionId: uuid, leaseId: uuid, status: 'completed' }], requiredLeases: [uuid] }) },
  { route: 'lease extend', method: 'POST', path: () => segment(uuid).map((l) => `/api/v1/lease/${l}/extend`), body: () => ({ seconds: 30 }) },
  { route: 'partitions changed', method: 'POST', path: () => fc.constant('/api/v1/partitions/changed'), body: (n) => ({ entries: [{ queue: n, since: '2026-01-01T00:00:00Z', limit: 10 }, { queue: n, after: 'cursor' }] }) },
  { route: 'fetch', method: 'POST', path: () => fc.constant('/api/v1/fetch'), body: (n) => ({ entries: [{ queue: n, partition: 'p1', fromOffset: 0, limit: 10, maxBytes: 1000 }] }) },
  { route: 'messages', method: 'GET', path: () => fc.constant('/api/v1/messages'), query: true },
  { route: 'message', method: 'GET', path: () => fc.tuple(segment(uuid), segment('t')).map(([p, t]) => `/api/v1/messages/${p}/${t}`) },
  { route: 'message delete', method: 'DELETE', path: () => fc.tuple(segment(uuid), segment('t')).map(([p, t]) => `/api/v1/messages/${p}/${t}`) },
  { route: 'dlq', method: 'GET', path: () => fc.constant('/api/v1/dlq'), query: true },
  { route: 'resources', method: 'GET', path: () => fc.constantFrom('/api/v1/resources/overview', '/api/v1/resources/namespaces', '/api/v1/resources/tasks', '/api/v1/resources/queues'), query: true },
  { route: 'queue detail', method: 'GET', path: (n) => fc.tuple(segment(n), fc.constantFrom('', '/depth')).map(([q, d]) => `/api/v1/resources/queues/${q}${d}`), query: true },
  { route: 'queue delete', method: 'DELETE', path: (n) => segment(n).map((q) => `/api/v1/resources/queues/${q}`) },
  { route: 'stats refresh', method: 'POST', path: () => fc.constant('/api/v1/stats/refresh'), body: () => ({}) },
  { route: 'traces', method: 'POST', path: () => fc.constant('/api/v1/traces'), body: () => ({ partitionId: uuid, transactionId: 't', traceNames: ['a'], eventType: 'info', data: { text: 'x' } }) },
  { route: 'trace names', method: 'GET', path: () => fc.constant('/api/v1/traces/names'), query: true },
  { route: 'traces by name', method: 'GET', path: (n) => segment(n).map((s) => `/api/v1/traces/by-name/${s}`), query: true },
  { route: 'trace', method: 'GET', path: () => fc.tuple(segment(uuid), segment('t')).map(([p, t]) => `/api/v1/traces/${p}/${t}`) },
  { route: 'kv batch', method: 'POST', path: () => fc.constant('/api/v1/kv'), body: (n) => ({ operations: [{ op: 'putIfAbsent', ns: n, key: 'k', value: { a: 1 }, ttlSeconds: 60, required: true }, { op: 'incr', ns: n, key: 'c', delta: 1, max: 5, forever: true }, { op: 'getPrefix', ns: n, prefix: 'k' }] }) },
  { route: 'kv key put', method: 'PUT', path: (n) => fc.tuple(segment(n), segment('a/b')).map(([ns, k]) => `/api/v1/kv/${ns}/${k}`), body: () => ({ value: { a: 1 }, ttlSeconds: 60, expect: 0 }) },
  { route: 'kv key get', method: 'GET', path: (n) => fc.tuple(segment(n), segment('k')).map(([ns, k]) => `/api/v1/kv/${ns}/${k}`) },
  { route: 'kv list', method: 'POST', path: () => fc.constant('/api/v1/resources/kv/list'), body: (n) => ({ namespace: n, prefix: '', limit: 10, includeExpired: true }) },
  { route: 'timers', method: 'POST', path: () => fc.constant('/api/v1/timers'), body: (n) => ({ operations: [{ op: 'schedule', queue: n, timerKey: 'k', delayMs: 60_000, txn: `${n}-t`, payload: 'eyJhIjoxfQ==' }] }) },
  { route: 'timers list', method: 'GET', path: (n) => segment(n).map((q) => `/api/v1/timers/${q}`), query: true },
  { route: 'timer cancel', method: 'DELETE', path: (n) => fc.tuple(segment(n), segment('k')).map(([q, k]) => `/api/v1/timers/${q}/${k}`), query: true },
  { route: 'transaction riders', method: 'POST', path: () => fc.constant('/api/v1/transaction'), body: (n) => ({ operations: [], kv: [{ op: 'put', ns: n, key: 'k', value: 1, forever: true }], timers: [{ op: 'cancel', queue: n, timerKey: 'k' }] }) },
  { route: 'unknown', method: 'GET', path: () => fc.constantFrom('/api/v1/nope', '/api/v2/push', '/api/v1/push/extra', '/', '//api/v1/push', '/api/v1/../v1/push') },
]

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD']
const CONTENT_TYPES = ['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', '']

/** The i-th request of a run. */
export function requestArbitrary(i: number): fc.Arbitrary<FuzzRequest> {
  const n = `fz${i}`
  return fc.constantFrom(...TEMPLATES).chain((t) =>
    fc
      .record({
        path: t.path(n),
        query: t.query ? query : fc.constant(''),
        headers: tenantHeaders,
        contentType: fc.constantFrom(...CONTENT_TYPES),
        method: fc.oneof({ weight: 20, arbitrary: fc.constant(t.method) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
        body: t.body
          ? fc.oneof({ weight: 1, arbitrary: fc.constant(t.body(n)).map((b) => JSON.stringify(b)) }, { weight: 6, arbitrary: mutate(t.body(n)).map((b) => JSON.stringify(b) ?? 'null') }, { weight: 1, arbitrary: rawBodies })
          : fc.oneof({ weight: 8, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: rawBodies }),
      })
      .map(({ path, query, headers, contentType, method, body }) => ({
        route: t.route,
        method,
        path: path + query,
        // Content-Length as a socket client sends it, so the cap is the chain's first step (API 3.5).
        headers: {
          ...headers,
          ...(contentType ? { 'content-type': contentType } : {}),
          ...(body !== undefined && method !== 'GET' && method !== 'HEAD' ? { 'content-length': String(bodyBytes(body)) } : {}),
        },
        body: method === 'GET' || method === 'HEAD' ? undefined : body,
      })),
  )
}

/** The string as PostgreSQL stores it: each lone surrogate replaced by U+FFFD. */
export const wellFormed = (s: string) => s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')

/** Percent-decoding that, like the router, turns invalid UTF-8 into U+FFFD instead of failing. */
export function decodeLenient(s: string): string {
  const bytes: number[] = []
  for (let i = 0; i < s.length; i++) {
    const hex = s[i] === '%' ? /^[0-9a-fA-F]{2}$/.exec(s.slice(i + 1, i + 3)) : null
    if (hex) {
      bytes.push(parseInt(hex[0], 16))
      i += 2
    } else bytes.push(...encoder.encode(s[i]!))
  }
  return new TextDecoder().decode(new Uint8Array(bytes))
}

/**
 * Every string a request carries (path segments raw and decoded, query values, body strings and
 * keys), each also as stored: a lone surrogate or invalid UTF-8 becomes U+FFFD on its way to text.
 */
export function stringsOf(request: FuzzRequest): Set<string> {
  const out = new Set<string>()
  const add = out.add.bind(out)
  out.add = (v: string) => (add(v), add(wellFormed(v)), out)
  const [path, qs] = request.path.split('?') as [string, string | undefined]
  for (const s of path.split('/')) {
    out.add(s)
    out.add(decodeLenient(s))
  }
  if (qs) for (const [, v] of new URLSearchParams(qs)) out.add(v)
  if (request.body !== undefined) {
    const text = typeof request.body === 'string' ? request.body : new TextDecoder().decode(request.body)
    try {
      const walk = (v: unknown) => {
        if (typeof v === 'string') out.add(v)
        else if (Array.isArray(v)) v.forEach(walk)
        else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) (out.add(k), walk(x))
      }
      walk(JSON.parse(text))
    } catch {}
  }
  return out
}

export const bodyBytes = (body: FuzzRequest['body']) => (body === undefined ? 0 : typeof body === 'string' ? encoder.encode(body).byteLength : body.byteLength)
