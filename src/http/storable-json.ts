// What a parsed JSON body may hold so that every later step can handle it: PostgreSQL text and
// jsonb cannot store U+0000 or a lone UTF-16 surrogate (`"\ud800"` without its pair; jsonb refuses
// the escape, text would store it mangled), and a document nested thousands of levels deep
// overflows the stack of JSON.stringify and of every recursive reader after the parse. Each is a
// client's mistake, so each is a 400 here, before any handler or procedure sees the body
// (docs/limits.md).
import { badRequest } from '../errors.js'

/**
 * Arrays and objects a body may nest, the body object itself counting as one: the recursion limit
 * of serde_json, the parser of Queen's Rust broker, so a body one accepts the other accepts too.
 */
export const MAX_JSON_DEPTH = 128

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Refuses a body whose text nests too deeply or whose strings or keys PostgreSQL cannot store. */
export function checkStorableJson(text: string, value: unknown): void {
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
    throw badRequest(`Request body nests deeper than ${MAX_JSON_DEPTH} arrays and objects`)
  }
  // Decoded UTF-8 holds neither character raw (JSON.parse refuses a raw U+0000 and the decoder
  // turns a surrogate's bytes into U+FFFD): only an escape brings one in. Without such an escape the
  // walk is skipped; with one it may still be a false alarm (an escaped backslash before "u").
  if (!/\\u(?:0000|[dD][89a-fA-F])/.test(text)) return
  const fault = firstUnstorable(value)
  if (fault === null) return
  const where = fault.path || 'body'
  throw badRequest(fault.nul ? `${where} must not contain U+0000` : `${where} must not contain a lone UTF-16 surrogate`)
}

/** Whether every string and key of a parsed value can be stored (no U+0000, no lone surrogate). */
export const wellFormed = (value: unknown): boolean => firstUnstorable(value) === null

/**
 * True when the JSON text opens more than `limit` arrays and objects at once. It scans the text
 * rather than the parsed value (no allocation, no recursion), and only when the text holds that
 * many brackets at all, which a native search tells cheaply.
 */
function nestsDeeperThan(text: string, limit: number): boolean {
  let brackets = 0
  for (const open of ['{', '[']) {
    for (let at = text.indexOf(open); at !== -1 && brackets <= limit; at = text.indexOf(open, at + 1)) brackets++
  }
  if (brackets <= limit) return false
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++ // a backslash escapes the next character
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true
    } else if (c === 0x7d || c === 0x5d) depth--
  }
  return false
}

/** The path of the first string or key holding U+0000 or a lone surrogate, or null. Iterative. */
function firstUnstorable(root: unknown): { path: string; nul: boolean } | null {
  const bad = (s: string) => (s.includes('\u0000') ? { nul: true } : LONE_SURROGATE.test(s) ? { nul: false } : null)
  const stack: [unknown, string][] = [[root, '']]
  while (stack.length > 0) {
    const [value, path] = stack.pop()!
    if (typeof value === 'string') {
      const fault = bad(value)
      if (fault) return { path, ...fault }
    } else if (Array.isArray(value)) {
      value.forEach((item, i) => stack.push([item, `${path}[${i}]`]))
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        const at = path ? `${path}.${key}` : key
        const fault = bad(key)
        if (fault) return { path: at, ...fault }
        stack.push([item, at])
      }
    }
  }
  return null
}
