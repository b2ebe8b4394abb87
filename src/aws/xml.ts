// The Query protocol's answers: a JSON-shaped result written as AWS's XML, laid out by the same
// shape table that decodes the requests (./shapes.ts).
import type { Shapes } from './shapes.js'

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;', '\r': '&#xD;' }

export function escapeXml(text: string): string {
  return text.replace(/[&<>"'\r]/g, (ch) => XML_ESCAPES[ch] ?? ch)
}

/** The members of a structure as XML elements, lists and maps laid out by the shape table. */
export function writeMembers(value: Record<string, unknown>, shapes: Shapes): string {
  let out = ''
  for (const [key, member] of Object.entries(value)) {
    if (member === undefined || member === null) continue
    const shape = shapes[key]
    if (shape?.kind === 'list' && Array.isArray(member)) {
      const tag = shape.flat ? shape.query : 'member'
      const items = member.map((item) => element(tag, item, shape.items ?? {})).join('')
      out += shape.flat ? items : `<${shape.query}>${items}</${shape.query}>`
    } else if (shape?.kind === 'map' && typeof member === 'object') {
      const tag = shape.flat ? shape.query : 'entry'
      const pairs = Object.entries(member as Record<string, unknown>)
        .map(([k, v]) => `<${tag}>${element(shape.key, k, {})}${element(shape.value, v, shape.values ?? {})}</${tag}>`)
        .join('')
      out += shape.flat ? pairs : `<${shape.query}>${pairs}</${shape.query}>`
    } else {
      out += element(key, member, {})
    }
  }
  return out
}

function element(name: string, value: unknown, shapes: Shapes): string {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return `<${name}>${writeMembers(value as Record<string, unknown>, shapes)}</${name}>`
  }
  if (Array.isArray(value)) return value.map((item) => element(name, item, shapes)).join('')
  return `<${name}>${escapeXml(String(value))}</${name}>`
}

/** A whole Query answer: `<XResponse xmlns><XResult>…</XResult><ResponseMetadata>…`. */
export function queryResponse(action: string, namespace: string, result: Record<string, unknown> | null, shapes: Shapes, requestId: string): string {
  const body = result === null ? '' : `<${action}Result>${writeMembers(result, shapes)}</${action}Result>`
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<${action}Response xmlns="${namespace}">${body}` +
    `<ResponseMetadata><RequestId>${escapeXml(requestId)}</RequestId></ResponseMetadata></${action}Response>`
  )
}
