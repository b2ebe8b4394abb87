// Signs requests for the AWS layer's tests with aws4fetch, a SigV4 signer written independently of
// the broker's verifier, so a test that passes shows two implementations agree.
import { AwsV4Signer } from 'aws4fetch'

export const KEY = { accessKeyId: 'AKIDTEST0001', secret: 'test-secret-0123456789abcdef' }

export interface SignOptions {
  method?: string
  url: string
  headers?: Record<string, string>
  body?: string
  service?: string
  region?: string
  presign?: boolean
  secret?: string
  accessKeyId?: string
  /** An ISO-8601 basic date-time (YYYYMMDDTHHMMSSZ) to sign at. */
  datetime?: string
}

export async function signedRequest(o: SignOptions): Promise<Request> {
  const signer = new AwsV4Signer({
    method: o.method ?? 'POST',
    url: o.url,
    headers: o.headers ?? {},
    body: o.body,
    accessKeyId: o.accessKeyId ?? KEY.accessKeyId,
    secretAccessKey: o.secret ?? KEY.secret,
    service: o.service ?? 'sqs',
    region: o.region ?? 'eu-west-3',
    signQuery: o.presign,
    datetime: o.datetime,
  })
  const signed = await signer.sign()
  return new Request(signed.url, { method: signed.method, headers: signed.headers, body: o.body })
}

export function amzDate(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '')
}
