// Hostile requests for every operation /openapi.json describes, as fast-check arbitraries. Each
// request starts from a value its schemas accept (path, query, header and body), then some parts
// turn hostile: full-Unicode strings with lone surrogates and U+0000, 10 000-character strings,
// nesting thousands deep, huge and negative numbers, wrong types, dropped, unknown and duplicate
// fields, truncated and non-UTF-8 bodies, wrong content types, wrong methods, oversized headers and
// URLs. Nothing here names a route: a route added to the table is fuzzed by being in the document.
import fc from 'fast-check'

export type JsonSchema = Record<string, any>

export interface Operation {
  method: string
  /** OpenAPI path, `/api/v1/timers/{queue}`. */
  path: string
  parameters: { name: string; in: 'path' | 'query' | 'header'; required?: boolean; schema?: JsonSchema }[]
  body?: { required: boolean; schema: JsonSchema }
}

export interface FuzzRequest {
  operation: string
  method: string
  url: string
  headers: Record<string, string>
  body?: string | Uint8Array
  /** What was made hostile, for a readable failure. */
  notes: string[]
}

export function operationsOf(document: { paths: Record<string, Record<string, any>> }): Operation[] {
  const out: Operation[] = []
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const content = op.requestBody?.content?.['application/json']
      out.push({
        method: method.toUpperCase(),
        path,
        parameters: op.parameters ?? [],
        ...(content ? { body: { required: op.requestBody.required === true, schema: content.schema } } : {}),
      })
    }
  }
  return out
}

// ---- hostile values -------------------------------------------------------------------------

const LONG = 'x'.repeat(10_000)
const HOSTILE_STRINGS = [
  '\ud800', 'a\udfffb', '\udc00\ud800', 'a\u0000b', '\u0000', LONG, '😀'.repeat(3000), '', ' ', '\u202e', '\ufeff', "'; drop table queen.queues; --",
  '%00', '../../etc/passwd', 'a/b', '\\', '"', '\n\r\t', 'null', 'NaN', '-1', '__QUEUE_MODE__', 'é'.normalize('NFD'),
]
/** Stand-ins replaced in the JSON text after stringify: values JSON.stringify cannot write. */
const DEEP = '\u0001deep\u0001'
const RAW_NUMBERS = ['1e999', '-1e999', '123456789012345678901234567890', '-0', '1E-400']
const RAW = (n: number) => `\u0001raw${n}\u0001`

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
)

const hostileNumber = fc.oneof(
  fc.constantFrom(-1, -2147483649, 2147483648, 2 ** 53 + 2, 2 ** 63, 1e308, -1e308, 1.5, -0.5, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER),
  fc.integer({ min: 0, max: RAW_NUMBERS.length - 1 }).map(RAW),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
)

export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  { weight: 2, arbitrary: hostileNumber },
  { weight: 2, arbitrary: fc.constantFrom<unknown>(null, true, false, [], {}, [null], { '': 1 }, [[[]]], '{}', '[]') },
  { weight: 1, arbitrary: fc.constant(DEEP) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.constant(Array.from({ length: 3000 }, (_, i) => i)) },
)

// ---- values the schemas accept --------------------------------------------------------------

const UUID = '0190b7a5-0000-7000-8000-000000000000'

/** A string of the right shape for a field, from its name: ids are UUIDs, instants ISO-8601. */
function plainString(name: string, schema: JsonSchema): fc.Arbitrary<string> {
  const lower = name.toLowerCase()
  if (schema.pattern === '^\\d+$') return fc.integer({ min: 0, max: 50 }).map(String)
  if (schema.pattern === '^(true|1|false|0)$') return fc.constantFrom('true', 'false', '1', '0')
  if (/id$/.test(lower) && lower !== 'transactionid') return fc.constantFrom(UUID, '01890a5d-ac96-774b-bcce-b302099a8057')
  if (/since|until|from$|to$|at$|time/.test(lower)) return fc.constant('2026-01-01T00:00:00Z')
  const max = Math.min(schema.maxLength ?? 12, 12)
  return fc.constantFrom('fz', 'fz-q', 'p1', 'g1', 'default', 'Default', 'k1').map((s) => s.slice(0, Math.max(max, 1)))
}

/** A value the schema accepts (as far as a generator can tell from JSON Schema alone). */
export function plainValue(schema: JsonSchema | undefined, name = '', depth = 0): fc.Arbitrary<unknown> {
  if (!schema || typeof schema !== 'object' || depth > 5) return fc.constantFrom<unknown>('fz', 1, null)
  if ('const' in schema) return fc.constant(schema.const)
  if (Array.isArray(schema.enum) && schema.enum.length) return fc.constantFrom(...schema.enum)
  const alternatives = schema.anyOf ?? schema.oneOf
  if (Array.isArray(alternatives) && alternatives.length) return fc.oneof(...alternatives.map((s: JsonSchema) => plainValue(s, name, depth + 1)))
  const types: string[] = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : ['any']
  return fc.constantFrom(...types).chain((type): fc.Arbitrary<unknown> => {
    switch (type) {
      case 'string':
        return plainString(name, schema)
      case 'integer':
      case 'number': {
        const min = Math.max(schema.minimum ?? 0, -1000)
        return fc.integer({ min, max: Math.max(min, Math.min(schema.maximum ?? 100, 100)) })
      }
      case 'boolean':
        return fc.boolean()
      case 'null':
        return fc.constant(null)
      case 'array':
        return fc.array(plainValue(schema.items, name, depth + 1), { minLength: Math.min(schema.minItems ?? 0, 3), maxLength: 3 })
      case 'object': {
        const props = Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)
        const required: string[] = schema.required ?? []
        return fc.record(Object.fromEntries(props.map(([k, s]) => [k, plainValue(s, k, depth + 1)])), { requiredKeys: required.filter((k) => props.some(([p]) => p === k)) })
      }
      default:
        return fc.jsonValue({ maxDepth: 2 })
    }
  })
}

// ---- mutations of a body ---------------------------------------------------------------------

type Mutation = { at: number; kind: 'replace' | 'drop' | 'unknown'; value: unknown; key: string }

const mutation: fc.Arbitrary<Mutation> = fc.record({
  at: fc.nat(),
  kind: fc.constantFrom('replace', 'replace', 'drop', 'unknown'),
  value: hostileValue,
  key: fc.constantFrom('__proto__', 'constructor', 'unknownField', 'tenant', 'id', '\ud800', 'a\u0000', LONG),
})

/** Every container and leaf of a JSON value, as [parent, key] pairs (the root has none). */
function slots(root: unknown): [Record<string, unknown> | unknown[], string | number][] {
  const out: [Record<string, unknown> | unknown[], string | number][] = []
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach((item, i) => (out.push([v, i]), walk(item)))
    else if (v && typeof v === 'object') for (const [k, item] of Object.entries(v)) (out.push([v as Record<string, unknown>, k]), walk(item))
  }
  walk(root)
  return out
}

function applyMutation(root: Record<string, unknown>, mutation: Mutation, notes: string[]): void {
  // A copy: constant hostile objects are shared between samples and must never contain themselves.
  const m = { ...mutation, value: structuredClone(mutation.value) }
  const all = slots(root)
  if (m.kind === 'unknown' || all.length === 0) {
    const containers: object[] = [root, ...all.map(([p, k]) => (p as any)[k]).filter((v) => v && typeof v === 'object' && !Array.isArray(v))]
    const target = containers[m.at % containers.length] as Record<string, unknown>
    Object.defineProperty(target, m.key, { value: m.value, enumerable: true, writable: true, configurable: true })
    notes.push(`unknown field ${JSON.stringify(m.key).slice(0, 20)}`)
    return
  }
  const [parent, key] = all[m.at % all.length]!
  if (m.kind === 'drop') {
    if (Array.isArray(parent)) parent.splice(key as number, 1)
    else delete parent[key as string]
    notes.push(`dropped ${String(key)}`)
  } else {
    ;(parent as any)[key] = m.value
    notes.push(`${String(key)} = ${describe(m.value)}`)
  }
}

const describe = (v: unknown) => (v === DEEP ? 'deep nesting' : typeof v === 'string' ? JSON.stringify(v.slice(0, 12)) + (v.length > 12 ? `…(${v.length})` : '') : JSON.stringify(v)?.slice(0, 30) ?? String(v))

const encoder = new TextEncoder()

/** JSON text with the stand-ins written out: nesting 5 000 deep and numbers outside doubles. */
function finish(text: string): string {
  return text
    .replaceAll(JSON.stringify(DEEP), '['.repeat(5000) + ']'.repeat(5000))
    .replace(/"\\u0001raw(\d)\\u0001"/g, (_, n: string) => RAW_NUMBERS[Number(n)]!)
}

type BodyShape = 'plain' | 'mutated' | 'duplicate' | 'truncated' | 'non-utf8' | 'not-object' | 'empty' | 'deep' | 'oversized'

const bodyText = (schema: JsonSchema) =>
  fc
    .record({
      value: plainValue(schema),
      shape: fc.constantFrom<BodyShape>('plain', 'plain', 'plain', 'mutated', 'mutated', 'mutated', 'mutated', 'duplicate', 'truncated', 'non-utf8', 'not-object', 'empty', 'deep', 'oversized'),
      mutations: fc.array(mutation, { minLength: 1, maxLength: 3 }),
      cut: fc.double({ min: 0, max: 1, noNaN: true }),
      duplicate: hostileValue,
    })
    .map(({ value, shape, mutations, cut, duplicate }): { body: string | Uint8Array; notes: string[] } => {
      const notes: string[] = [`body ${shape}`]
      const root = (value && typeof value === 'object' && !Array.isArray(value) ? value : {}) as Record<string, unknown>
      if (shape === 'mutated') for (const m of mutations) applyMutation(root, m, notes)
      const text = finish(JSON.stringify(root))
      switch (shape) {
        case 'duplicate': {
          // The same key twice: JSON.parse keeps the last, so the hostile one goes first and last.
          const key = Object.keys(root)[0] ?? 'queue'
          const dup = finish(JSON.stringify(duplicate) ?? 'null')
          notes.push(`duplicate ${key} = ${describe(duplicate)}`)
          return { body: `{${JSON.stringify(key)}:${dup},${text.slice(1, -1)}${text.length > 2 ? ',' : ''}${JSON.stringify(key)}:${dup}}`, notes }
        }
        case 'truncated':
          return { body: text.slice(0, Math.floor(cut * text.length)), notes }
        case 'non-utf8': {
          // Invalid UTF-8 inside a string value: a lone continuation byte, an overlong form and a surrogate's CESU-8 bytes.
          const bytes = encoder.encode(text)
          const quote = Math.max(bytes.indexOf(0x22, 2), 1)
          return { body: new Uint8Array([...bytes.slice(0, quote + 1), 0xff, 0xc0, 0xaf, 0xed, 0xa0, 0x80, ...bytes.slice(quote + 1)]), notes }
        }
        case 'not-object':
          return { body: ['[]', '"text"', 'null', '12', 'true', '[{}]'][Math.min(Math.floor(cut * 6), 5)]!, notes }
        case 'empty':
          return { body: '', notes }
        case 'deep':
          return { body: `{"a":${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}}`, notes }
        case 'oversized':
          // Over any body cap a test sets (MAX_BODY_BYTES is at least 1 KiB; the fuzz test sets 256 KiB).
          return { body: `{"pad":"${'z'.repeat(300_000)}",${text.slice(1)}`, notes }
        default:
          return { body: text, notes }
      }
    })

// ---- the request ------------------------------------------------------------------------------

/** encodeURIComponent that writes a lone surrogate as its (invalid) CESU-8 bytes instead of throwing. */
export function encodeHostile(s: string): string {
  return s.replace(/[\s\S]/gu, (ch) => {
    try {
      return encodeURIComponent(ch)
    } catch {
      return '%ED%A0%80'
    }
  })
}

const pathValue = (p: Operation['parameters'][number]) =>
  fc.oneof(
    { weight: 6, arbitrary: plainValue(p.schema, p.name).map((v) => encodeURIComponent(String(v))) },
    { weight: 2, arbitrary: hostileString.map(encodeHostile) },
    { weight: 1, arbitrary: fc.constantFrom('%00', '%2F', '%ED%A0%80', '%ff', '%', '%zz', '..', encodeURIComponent(UUID) + '%00') },
  )

const queryValue = (p: Operation['parameters'][number]) =>
  fc.oneof(
    { weight: 6, arbitrary: plainValue(p.schema, p.name).map((v) => String(v)) },
    { weight: 2, arbitrary: hostileString },
    { weight: 1, arbitrary: hostileNumber.map((n) => (typeof n === 'string' ? RAW_NUMBERS[Number(n.slice(4, -1))]! : String(n))) },
  )

/** Header values are bytes: only Latin-1 and no line breaks can be sent at all. */
const headerString = fc.oneof(
  fc.constantFrom('', ' ', 'a b', '../x', 'x'.repeat(200), "t'; drop", 'é', 'a,b', '\u00ff\u0080'),
  fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).map((c) => String.fromCharCode(c)), maxLength: 20 }),
)

const CONTENT_TYPES = ['application/json', 'application/json', 'application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', '']
const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH']

export interface FuzzOptions {
  tenantHeader: string
  tenant: string
  /** Methods each OpenAPI path answers, to choose a wrong one. */
  methodsOf: (path: string) => string[]
}

export function requestArbitrary(op: Operation, options: FuzzOptions): fc.Arbitrary<FuzzRequest> {
  const pathParams = op.parameters.filter((p) => p.in === 'path')
  const queryParams = op.parameters.filter((p) => p.in === 'query')
  const wrongMethods = METHODS.filter((m) => !options.methodsOf(op.path).includes(m))
  return fc
    .record({
      path: fc.tuple(...pathParams.map(pathValue)),
      query: fc.tuple(...queryParams.map((p) => fc.option(queryValue(p), { nil: undefined, freq: 2 }))),
      extraQuery: fc.array(fc.tuple(fc.constantFrom('unknown', 'limit', 'offset', '%00', ...queryParams.map((p) => p.name)), hostileString), { maxLength: 2 }),
      tenant: fc.oneof({ weight: 12, arbitrary: fc.constant(options.tenant) }, { weight: 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: headerString }),
      contentType: fc.constantFrom(...CONTENT_TYPES),
      method: fc.oneof({ weight: 14, arbitrary: fc.constant(op.method) }, { weight: wrongMethods.length ? 1 : 0, arbitrary: fc.constantFrom(...(wrongMethods.length ? wrongMethods : [op.method])) }),
      bigHeader: fc.oneof({ weight: 30, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
      longUrl: fc.oneof({ weight: 40, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
      // A route without a body sometimes gets one anyway.
      body: fc.option(bodyText(op.body?.schema ?? { type: 'object' }), { nil: undefined, freq: op.body ? 12 : 1 }),
    })
    .map(({ path, query, extraQuery, tenant, contentType, method, bigHeader, longUrl, body }) => {
      const notes: string[] = []
      let i = 0
      let url = op.path.replace(/\{[^}]+\}/g, () => path[i++]!)
      const pairs: string[] = []
      queryParams.forEach((p, j) => query[j] !== undefined && pairs.push(`${encodeURIComponent(p.name)}=${encodeHostile(query[j]!)}`))
      for (const [k, v] of extraQuery) pairs.push(`${k}=${encodeHostile(v)}`)
      if (longUrl) (pairs.push(`pad=${'y'.repeat(100_000)}`), notes.push('100 000-character URL'))
      if (pairs.length) url += `?${pairs.join('&')}`
      const headers: Record<string, string> = {}
      if (tenant !== undefined) headers[options.tenantHeader] = tenant
      if (tenant !== options.tenant) notes.push(`tenant ${JSON.stringify(tenant)}`)
      if (contentType) headers['content-type'] = contentType
      const sendsBody = body !== undefined && method !== 'GET'
      // Content-Length as a socket client sends it, so the body size cap meets it first.
      if (sendsBody) headers['content-length'] = String(typeof body.body === 'string' ? encoder.encode(body.body).byteLength : body.body.byteLength)
      if (bigHeader) (headers['x-oversized'] = 'h'.repeat(64 * 1024), notes.push('64 KiB header'))
      if (method !== op.method) notes.push(`wrong method ${method}`)
      if (sendsBody) notes.push(...body.notes)
      return {
        operation: `${op.method} ${op.path}`,
        method,
        url,
        headers,
        ...(sendsBody ? { body: body.body } : {}),
        notes,
      }
    })
}
