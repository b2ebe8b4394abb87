// Request bodies, by the route's body class (docs/routes.md): the size cap is enforced while
// reading (so a huge body is never buffered whole), JSON is parsed regardless of Content-Type, and
// U+0000 is refused anywhere in the document because PostgreSQL text cannot store it and such
// input must never reach SQL.
import { HttpError, badRequest } from '../errors.js'
import type { BodyClass } from './route.js'

export function tooLarge(limit: number): HttpError {
  return new HttpError(413, 'payload_too_large', `Request body too large (limit ${limit} bytes)`)
}

const UTF8 = new TextDecoder()

async function readText(request: Request, limit: number): Promise<string> {
  const header = request.headers.get('content-length')
  const declared = header === null ? NaN : Number(header)
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit)
  // A declared length within the limit bounds what HTTP framing delivers, so the body can be read
  // whole. That path matters on Node: @hono/node-server answers text() straight from the socket,
  // while touching request.body builds a full fetch Request and a web stream for every call.
  if (Number.isInteger(declared) && declared >= 0) {
    const bytes = await request.arrayBuffer()
    if (bytes.byteLength > limit) throw tooLarge(limit)
    return UTF8.decode(bytes)
  }
  if (!request.body) return ''
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      throw tooLarge(limit)
    }
    chunks.push(value)
  }
  const all = new Uint8Array(size)
  let at = 0
  for (const chunk of chunks) {
    all.set(chunk, at)
    at += chunk.byteLength
  }
  return UTF8.decode(all)
}

/** Reads and parses the body of a route with a required or optional body. */
export async function readJsonBody(request: Request, bodyClass: Exclude<BodyClass, 'none'>, limit: number): Promise<Record<string, unknown>> {
  const text = await readText(request, limit)
  if (text.trim() === '') {
    if (bodyClass === 'optional') return {}
    throw badRequest('Empty request body', 'invalid_json')
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw badRequest(`Invalid JSON: ${(error as Error).message}`, 'invalid_json')
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw badRequest('Request body must be a JSON object')
  }
  // JSON text cannot carry a raw U+0000 (JSON.parse refuses control characters), only the escape
  // \u0000; without one, no string or key of the document holds it and the walk is skipped.
  const nul = text.includes('\\u0000') ? findString(value, '', (s) => s.includes('\u0000')) : null
  if (nul !== null) throw badRequest(`${nul || 'body'} must not contain U+0000`)
  // Nor can jsonb hold an unpaired UTF-16 surrogate, which only the escape form (\ud800) can spell:
  // refused here as the client's mistake, never left for the database to answer 500.
  const lone = SURROGATE_ESCAPE.test(text) ? findString(value, '', (s) => LONE_SURROGATE.test(s)) : null
  if (lone !== null) throw badRequest(`${lone || 'body'} must be well-formed Unicode (it holds an unpaired surrogate)`)
  return value as Record<string, unknown>
}

const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** Whether every string and key of a JSON value is well-formed Unicode (jsonb can store it). */
export const wellFormed = (value: unknown): boolean => findString(value, '', (s) => LONE_SURROGATE.test(s)) === null

/** The path of the first string (or key) that `bad` holds for, or null. Iterative: payloads can nest deeply. */
function findString(root: unknown, rootPath: string, bad: (s: string) => boolean): string | null {
  const stack: [unknown, string][] = [[root, rootPath]]
  while (stack.length > 0) {
    const [value, path] = stack.pop()!
    if (typeof value === 'string') {
      if (bad(value)) return path
    } else if (Array.isArray(value)) {
      value.forEach((item, i) => stack.push([item, `${path}[${i}]`]))
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        const at = path ? `${path}.${key}` : key
        if (bad(key)) return at
        stack.push([item, at])
      }
    }
  }
  return null
}
