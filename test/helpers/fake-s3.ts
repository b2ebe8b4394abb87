// A small S3-compatible server for the S3 driver's test: PutObject, GetObject and ListObjectsV2
// with path-style addressing, in memory, and a SigV4 check of its own (node:crypto, independent of
// aws4fetch) so a request signed wrongly, or altered after signing, is refused with 403 the way S3
// refuses it. No real S3-compatible server (MinIO and the like) can be installed here, which is
// why this fake exists; the R2 path is tested against miniflare's real R2 instead.
import { createHash, createHmac } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface FakeS3 {
  endpoint: string
  objects: Map<string, Buffer>
  /** Requests refused for a bad signature. */
  refused: number
  close(): Promise<void>
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex')
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest()
const rfc3986 = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

export async function startFakeS3(credentials: { accessKeyId: string; secretAccessKey: string; region: string }): Promise<FakeS3> {
  const objects = new Map<string, Buffer>()
  const state = { refused: 0 }

  function signatureValid(req: IncomingMessage, url: URL, body: Buffer): boolean {
    const auth = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
      String(req.headers.authorization ?? ''),
    )
    if (!auth) return false
    const [, key, day, region, signed, signature] = auth
    if (key !== credentials.accessKeyId || region !== credentials.region) return false
    const payload = String(req.headers['x-amz-content-sha256'] ?? '')
    if (payload !== 'UNSIGNED-PAYLOAD' && payload !== sha256(body)) return false
    const query = [...url.searchParams].map(([k, v]) => [rfc3986(k), rfc3986(v)]).sort(([a, x], [b, y]) => (a! < b! ? -1 : a! > b! ? 1 : x! < y! ? -1 : 1))
    const headers = signed!.split(';').map((name) => `${name}:${String(req.headers[name] ?? '').trim().replace(/\s+/g, ' ')}\n`)
    const canonical = [req.method, url.pathname, query.map(([k, v]) => `${k}=${v}`).join('&'), headers.join(''), signed, payload].join('\n')
    const scope = `${day}/${region}/s3/aws4_request`
    const toSign = ['AWS4-HMAC-SHA256', String(req.headers['x-amz-date']), scope, sha256(canonical)].join('\n')
    const signingKey = hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, day!), region!), 's3'), 'aws4_request')
    return createHmac('sha256', signingKey).update(toSign).digest('hex') === signature
  }

  const answer = (res: ServerResponse, status: number, body: string | Buffer = '', type = 'application/xml') => {
    res.writeHead(status, { 'content-type': type })
    res.end(body)
  }

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks)
    const url = new URL(req.url ?? '/', 'http://fake')
    if (!signatureValid(req, url, body)) {
      state.refused++
      return answer(res, 403, '<Error><Code>SignatureDoesNotMatch</Code></Error>')
    }
    const [, bucket, ...rest] = url.pathname.split('/')
    const key = rest.map(decodeURIComponent).join('/')
    const id = `${decodeURIComponent(bucket ?? '')}/${key}`
    if (req.method === 'PUT' && key) {
      objects.set(id, body)
      return answer(res, 200)
    }
    if (req.method === 'GET' && key) {
      const found = objects.get(id)
      return found ? answer(res, 200, found, 'application/octet-stream') : answer(res, 404, '<Error><Code>NoSuchKey</Code></Error>')
    }
    if (req.method === 'GET' && url.searchParams.get('list-type') === '2') {
      // Pages of 2 keys, so the driver's continuation handling is exercised.
      const prefix = `${decodeURIComponent(bucket ?? '')}/${url.searchParams.get('prefix') ?? ''}`
      const all = [...objects.keys()].filter((k) => k.startsWith(prefix)).sort()
      const from = Number(url.searchParams.get('continuation-token') ?? 0)
      const page = all.slice(from, from + 2)
      const truncated = from + 2 < all.length
      const keys = page.map((k) => `<Contents><Key>${xml(k.slice(k.indexOf('/') + 1))}</Key></Contents>`).join('')
      return answer(res, 200, `<ListBucketResult><IsTruncated>${truncated}</IsTruncated>${keys}${truncated ? `<NextContinuationToken>${from + 2}</NextContinuationToken>` : ''}</ListBucketResult>`)
    }
    return answer(res, 400, '<Error><Code>NotImplemented</Code></Error>')
  })
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready))
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    objects,
    get refused() {
      return state.refused
    },
    close: () => new Promise<void>((done) => server.close(() => done())),
  }
}
