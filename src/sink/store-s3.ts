// The S3-compatible driver: any endpoint that speaks S3's PutObject, GetObject and ListObjectsV2
// (AWS S3, R2's S3 API, MinIO, ...), signed with SigV4 by aws4fetch: one small dependency-free
// module on fetch and WebCrypto, so the same driver runs on Node and in Workers (docs/sink.md).
// Path-style addressing (endpoint/bucket/key) because every S3-compatible server accepts it.
import { AwsClient } from 'aws4fetch'
import type { ObjectStore } from './store.js'

export interface S3Target {
  endpoint: string
  bucket: string
  region: string
  accessKeyId: string
  secretAccessKey: string
}

// S3 keys are bytes; each path segment is percent-encoded, the slashes between them kept.
const encodeKey = (key: string) => key.split('/').map(encodeURIComponent).join('/')

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }
const unescapeXml = (text: string) =>
  text.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (whole, name: string) =>
    name.startsWith('#x') ? String.fromCodePoint(parseInt(name.slice(2), 16)) : name.startsWith('#') ? String.fromCodePoint(Number(name.slice(1))) : (XML_ENTITIES[name] ?? whole),
  )

export function s3Store(target: S3Target): ObjectStore {
  const client = new AwsClient({ accessKeyId: target.accessKeyId, secretAccessKey: target.secretAccessKey, service: 's3', region: target.region })
  const base = `${target.endpoint.replace(/\/+$/, '')}/${encodeURIComponent(target.bucket)}`
  const fail = async (what: string, res: Response) => {
    // The body of an S3 error is XML naming the code; it never carries the credentials.
    const code = /<Code>([^<]*)<\/Code>/.exec(await res.text())?.[1] ?? ''
    return new Error(`S3 ${what} answered ${res.status} ${code}`.trim())
  }
  return {
    describe: `s3://${target.bucket} at ${new URL(target.endpoint).host}`,
    async put(key, body, contentType) {
      const res = await client.fetch(`${base}/${encodeKey(key)}`, { method: 'PUT', body: body as Uint8Array<ArrayBuffer>, headers: { 'content-type': contentType } })
      if (!res.ok) throw await fail(`PUT ${key}`, res)
      await res.body?.cancel()
    },
    async get(key) {
      const res = await client.fetch(`${base}/${encodeKey(key)}`, { method: 'GET' })
      if (res.status === 404) {
        await res.body?.cancel()
        return null
      }
      if (!res.ok) throw await fail(`GET ${key}`, res)
      return new Uint8Array(await res.arrayBuffer())
    },
    async list(prefix) {
      const keys: string[] = []
      let token: string | undefined
      for (;;) {
        const query = new URLSearchParams({ 'list-type': '2', prefix })
        if (token) query.set('continuation-token', token)
        const res = await client.fetch(`${base}?${query}`, { method: 'GET' })
        if (!res.ok) throw await fail(`LIST ${prefix}`, res)
        const xml = await res.text()
        for (const m of xml.matchAll(/<Key>([^<]*)<\/Key>/g)) keys.push(unescapeXml(m[1]!))
        if (!/<IsTruncated>true<\/IsTruncated>/.test(xml)) break
        token = unescapeXml(/<NextContinuationToken>([^<]*)<\/NextContinuationToken>/.exec(xml)?.[1] ?? '')
        if (!token) break
      }
      return keys.sort()
    },
  }
}
