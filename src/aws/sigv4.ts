// AWS Signature Version 4, verified in house so an unmodified AWS SDK can sign its requests with an
// access key this broker was configured with. Both variants are accepted: the Authorization header
// and the presigned query (X-Amz-Signature in the URL). Web Crypto only, so Node and Workers share it.
//
// What is checked: the algorithm, the credential scope (`<date>/<region>/<service>/aws4_request`,
// any region, a service the caller allows), the clock (AWS's 15 minutes either way; a presigned URL
// also until its X-Amz-Expires), and the signature itself, compared in constant time.

export const SKEW_MS = 15 * 60 * 1000
const ALGORITHM = 'AWS4-HMAC-SHA256'
const MAX_PRESIGN_SECONDS = 7 * 24 * 3600
const encoder = new TextEncoder()

/** What the verifier needs of a request; the body is the raw bytes that were signed. */
export interface SignedRequest {
  method: string
  url: URL
  /** Header names in any case. */
  headers: Headers
  body: Uint8Array<ArrayBuffer>
}

export interface Credential {
  accessKeyId: string
  secret: string
}

export interface Verified {
  accessKeyId: string
  region: string
  service: string
}

/** A refusal, named as AWS names it, so the protocol layer can render it in AWS's shape. */
export class SignatureError extends Error {
  constructor(
    readonly code: 'MissingAuthenticationToken' | 'IncompleteSignature' | 'InvalidClientTokenId' | 'SignatureDoesNotMatch' | 'RequestExpired' | 'AccessDenied',
    message: string,
  ) {
    super(message)
    this.name = 'SignatureError'
  }
}

interface Parsed {
  accessKeyId: string
  date: string
  region: string
  service: string
  signedHeaders: string[]
  signature: string
  amzDate: string
  expiresSeconds: number | null
  presigned: boolean
}

export async function verifySigV4(
  request: SignedRequest,
  lookup: (accessKeyId: string) => Credential | undefined,
  services: readonly string[],
  now: number = Date.now(),
): Promise<Verified> {
  const parsed = parseAuthorization(request)
  if (!services.includes(parsed.service)) {
    throw new SignatureError('SignatureDoesNotMatch', `Credential should be scoped to a valid service (${services.join(' or ')}), not '${parsed.service}'`)
  }
  if (!parsed.amzDate.startsWith(parsed.date)) {
    throw new SignatureError('SignatureDoesNotMatch', 'Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP')
  }
  checkClock(parsed, now)
  const credential = lookup(parsed.accessKeyId)
  if (!credential) throw new SignatureError('InvalidClientTokenId', 'The security token included in the request is invalid.')

  const scope = `${parsed.date}/${parsed.region}/${parsed.service}/aws4_request`
  const key = await signingKey(credential.secret, parsed.date, parsed.region, parsed.service)
  let matched = false
  for (const payload of await payloadHashes(request, parsed)) {
    const canonical = canonicalRequest(request, parsed, payload)
    const stringToSign = `${ALGORITHM}\n${parsed.amzDate}\n${scope}\n${await sha256Hex(encoder.encode(canonical))}`
    // Every candidate is computed and compared, so the time taken says nothing about which matched.
    if (constantTimeEqual(toHex(await hmac(key, stringToSign)), parsed.signature.toLowerCase())) matched = true
  }
  if (!matched) {
    throw new SignatureError('SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.')
  }
  return { accessKeyId: parsed.accessKeyId, region: parsed.region, service: parsed.service }
}

function parseAuthorization(request: SignedRequest): Parsed {
  const query = request.url.searchParams
  const header = request.headers.get('authorization')
  if (header !== null) {
    if (!header.startsWith(`${ALGORITHM} `)) throw new SignatureError('IncompleteSignature', `Unsupported authorization algorithm; use ${ALGORITHM}`)
    const fields = new Map<string, string>()
    for (const part of header.slice(ALGORITHM.length + 1).split(',')) {
      const eq = part.indexOf('=')
      if (eq > 0) fields.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim())
    }
    const credential = fields.get('Credential')
    const signedHeaders = fields.get('SignedHeaders')
    const signature = fields.get('Signature')
    const amzDate = request.headers.get('x-amz-date')
    if (!credential || !signedHeaders || !signature) {
      throw new SignatureError('IncompleteSignature', 'Authorization header requires Credential, SignedHeaders and Signature')
    }
    if (!amzDate) throw new SignatureError('IncompleteSignature', 'Authorization header requires an X-Amz-Date header')
    return { ...scopeOf(credential), signedHeaders: signedHeaders.split(';'), signature, amzDate, expiresSeconds: null, presigned: false }
  }
  if (query.has('X-Amz-Signature')) {
    if (query.get('X-Amz-Algorithm') !== ALGORITHM) throw new SignatureError('IncompleteSignature', `X-Amz-Algorithm must be ${ALGORITHM}`)
    const credential = query.get('X-Amz-Credential')
    const signedHeaders = query.get('X-Amz-SignedHeaders')
    const amzDate = query.get('X-Amz-Date')
    const expires = query.get('X-Amz-Expires')
    if (!credential || !signedHeaders || !amzDate || !expires || !/^\d+$/.test(expires)) {
      throw new SignatureError('IncompleteSignature', 'A presigned URL requires X-Amz-Credential, X-Amz-SignedHeaders, X-Amz-Date and X-Amz-Expires')
    }
    if (Number(expires) > MAX_PRESIGN_SECONDS) throw new SignatureError('AccessDenied', 'X-Amz-Expires must be at most 604800 seconds')
    return {
      ...scopeOf(credential),
      signedHeaders: signedHeaders.split(';'),
      signature: query.get('X-Amz-Signature') ?? '',
      amzDate,
      expiresSeconds: Number(expires),
      presigned: true,
    }
  }
  throw new SignatureError('MissingAuthenticationToken', 'Request is missing Authentication Token')
}

function scopeOf(credential: string): Pick<Parsed, 'accessKeyId' | 'date' | 'region' | 'service'> {
  const parts = credential.split('/')
  if (parts.length !== 5 || parts[4] !== 'aws4_request' || !/^\d{8}$/.test(parts[1] ?? '')) {
    throw new SignatureError('IncompleteSignature', 'Credential must be <key>/<YYYYMMDD>/<region>/<service>/aws4_request')
  }
  const [accessKeyId = '', date = '', region = '', service = ''] = parts
  return { accessKeyId, date, region, service }
}

function checkClock(parsed: Parsed, now: number): void {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(parsed.amzDate)
  if (!m) throw new SignatureError('IncompleteSignature', 'X-Amz-Date must be YYYYMMDDTHHMMSSZ')
  const signedAt = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]))
  if (parsed.presigned) {
    if (signedAt - now > SKEW_MS) throw new SignatureError('SignatureDoesNotMatch', 'Signature not yet current')
    if (now > signedAt + (parsed.expiresSeconds ?? 0) * 1000) throw new SignatureError('RequestExpired', 'Request has expired')
    return
  }
  if (Math.abs(now - signedAt) > SKEW_MS) {
    throw new SignatureError('SignatureDoesNotMatch', 'Signature expired: the request time is more than 15 minutes from the server time')
  }
}

/**
 * The payload hashes a signer may have used. A presigned URL is signed before its body exists:
 * botocore signs the constant UNSIGNED-PAYLOAD, the JavaScript SDK the hash of the empty body, so
 * both are tried. A header-signed request signs its body, unless it says UNSIGNED-PAYLOAD.
 */
async function payloadHashes(request: SignedRequest, parsed: Parsed): Promise<string[]> {
  const declared = request.headers.get('x-amz-content-sha256')
  if (parsed.presigned) return ['UNSIGNED-PAYLOAD', await sha256Hex(request.body)]
  if (declared === 'UNSIGNED-PAYLOAD') return [declared]
  const actual = await sha256Hex(request.body)
  if (declared !== null && declared.toLowerCase() !== actual) {
    throw new SignatureError('SignatureDoesNotMatch', 'The provided x-amz-content-sha256 header does not match what was computed.')
  }
  return [actual]
}

function canonicalRequest(request: SignedRequest, parsed: Parsed, payload: string): string {
  const headers = parsed.signedHeaders.map((name) => {
    const value = name === 'host' ? (request.headers.get('host') ?? request.url.host) : request.headers.get(name)
    if (value === null) throw new SignatureError('SignatureDoesNotMatch', `Signed header ${name} is missing from the request`)
    return `${name}:${value.trim().replace(/\s+/g, ' ')}\n`
  })
  return [request.method, canonicalPath(request.url.pathname), canonicalQuery(request.url.searchParams), headers.join(''), parsed.signedHeaders.join(';'), payload].join('\n')
}

/** The path as SDKs sign it outside S3: dot segments resolved, then the (already escaped) path escaped once more. */
export function canonicalPath(rawPath: string): string {
  const segments: string[] = []
  for (const segment of rawPath.split('/')) {
    if (segment === '' || segment === '.') continue
    if (segment === '..') segments.pop()
    else segments.push(segment)
  }
  const trailing = segments.length > 0 && rawPath.endsWith('/') ? '/' : ''
  return uriEscape(`/${segments.join('/')}${trailing}`).replace(/%2F/g, '/')
}

function canonicalQuery(query: URLSearchParams): string {
  const pairs: [string, string][] = []
  for (const [key, value] of query) if (key !== 'X-Amz-Signature') pairs.push([uriEscape(key), uriEscape(value)])
  pairs.sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
  return pairs.map(([k, v]) => `${k}=${v}`).join('&')
}

/** RFC 3986 escaping as SigV4 defines it: everything but A-Z a-z 0-9 - _ . ~ is percent-encoded. */
export function uriEscape(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`)
}

async function signingKey(secret: string, date: string, region: string, service: string): Promise<ArrayBuffer> {
  let key = await hmac(encoder.encode(`AWS4${secret}`), date)
  key = await hmac(key, region)
  key = await hmac(key, service)
  return hmac(key, 'aws4_request')
}

export async function hmac(key: ArrayBuffer | Uint8Array<ArrayBuffer>, data: string | Uint8Array<ArrayBuffer>): Promise<ArrayBuffer> {
  const cryptoKey = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  return crypto.subtle.sign('HMAC', cryptoKey, typeof data === 'string' ? encoder.encode(data) : data)
}

export async function sha256Hex(data: Uint8Array<ArrayBuffer>): Promise<string> {
  return toHex(await crypto.subtle.digest('SHA-256', data))
}

export function toHex(buffer: ArrayBuffer): string {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, '0')).join('')
}

/** Compares two strings in time that depends only on their lengths, so a guess learns nothing from timing. */
export function constantTimeEqual(a: string, b: string): boolean {
  let diff = a.length ^ b.length
  const n = Math.max(a.length, b.length)
  for (let i = 0; i < n; i++) diff |= (a.charCodeAt(i) || 0) ^ (b.charCodeAt(i) || 0)
  return diff === 0
}
