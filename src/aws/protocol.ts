// Telling the two AWS wire protocols apart, per request, and reading each into one shape.
// `X-Amz-Target: <Prefix>.<Action>` is AWS JSON 1.0; otherwise the form's `Action=` (body, or the
// URL of a presigned GET) is the Query protocol. Content-Type decides nothing: clients get it wrong,
// and both protocols are unambiguous without it.
import { AwsError, malformed } from './errors.js'
import { decodeQuery, QueryDecodeError } from './query-decode.js'
import type { Shapes } from './shapes.js'

export type Protocol = 'json' | 'query'

export interface Sniffed {
  protocol: Protocol
  /** The action named, or null when the request names none. */
  action: string | null
}

/** `targetPrefixes` are the JSON protocol's service prefixes (`AmazonSQS`). */
export function sniffProtocol(headers: Headers, url: URL, body: Uint8Array, targetPrefixes: readonly string[]): Sniffed {
  const target = headers.get('x-amz-target')
  if (target !== null) {
    const dot = target.lastIndexOf('.')
    const prefix = target.slice(0, dot)
    if (dot <= 0 || !targetPrefixes.includes(prefix)) return { protocol: 'json', action: target }
    return { protocol: 'json', action: target.slice(dot + 1) }
  }
  const action = url.searchParams.get('Action') ?? formParams(body).get('Action')
  return { protocol: 'query', action: action === null || action === '' ? null : action }
}

function formParams(body: Uint8Array): URLSearchParams {
  if (body.length === 0) return new URLSearchParams()
  return new URLSearchParams(new TextDecoder().decode(body))
}

/** The action's input in the JSON protocol's shape. Malformed input is AWS's 400, never a throw of another kind. */
export function readInput(protocol: Protocol, url: URL, body: Uint8Array, shapes: Shapes): Record<string, unknown> {
  if (protocol === 'json') {
    if (body.length === 0) return {}
    let parsed: unknown
    try {
      parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body))
    } catch {
      throw new AwsError('SerializationException', 'The request body is not valid JSON.')
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new AwsError('SerializationException', 'The request body must be a JSON object.')
    return parsed as Record<string, unknown>
  }
  const params: [string, string][] = [...url.searchParams]
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body)
  } catch {
    throw malformed('The request body is not valid UTF-8.')
  }
  if (text !== '') params.push(...new URLSearchParams(text))
  try {
    return decodeQuery(params, shapes)
  } catch (error) {
    if (error instanceof QueryDecodeError) throw malformed(error.message)
    throw error
  }
}

/** The credential scope's service of a signed request (header or presigned), or null when unsigned. */
export function scopeService(headers: Headers, url: URL): string | null {
  const auth = headers.get('authorization')
  const credential = auth !== null ? /Credential=([^,\s]+)/.exec(auth)?.[1] : url.searchParams.get('X-Amz-Credential')
  return credential?.split('/')[3] ?? null
}
