// Request bodies, by the route's body class (docs/routes.md): the size cap is enforced while
// reading (so a huge body is never buffered whole), JSON is parsed regardless of Content-Type, and
// what PostgreSQL cannot store or a recursive reader cannot walk is refused before any handler
// sees it (storable-json.ts, docs/limits.md).
import { HttpError, badRequest } from '../errors.js'
import { checkStorableJson } from './storable-json.js'
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
  checkStorableJson(text, value)
  return value as Record<string, unknown>
}
