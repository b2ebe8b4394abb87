// What an archived object holds: gzip-compressed NDJSON, one line per frame, in offset order.
// Built on web streams and WebCrypto only, so Node and workerd produce the same lines and the
// same sha256 (taken over the uncompressed NDJSON: gzip output may differ between zlib builds,
// the content may not).

export interface ArchivedFrame {
  offset: number
  transactionId: string
  createdAt: string
  /** Decrypted when the queue is encrypted; null (with decryptError) when no key could open it. */
  payload: unknown
  decryptError?: string
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

export function frameLine(frame: ArchivedFrame): string {
  const line: ArchivedFrame = { offset: frame.offset, transactionId: frame.transactionId, createdAt: frame.createdAt, payload: frame.payload ?? null }
  if (frame.decryptError !== undefined) line.decryptError = frame.decryptError
  return `${JSON.stringify(line)}\n`
}

export const utf8 = (text: string) => encoder.encode(text)

export function parseLines(ndjson: Uint8Array): ArchivedFrame[] {
  return decoder
    .decode(ndjson)
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as ArchivedFrame)
}

async function transform(bytes: Uint8Array, stream: CompressionStream | DecompressionStream): Promise<Uint8Array> {
  const piped = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(stream)
  return new Uint8Array(await new Response(piped).arrayBuffer())
}

export const gzip = (bytes: Uint8Array) => transform(bytes, new CompressionStream('gzip'))
export const gunzip = (bytes: Uint8Array) => transform(bytes, new DecompressionStream('gzip'))

export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>))
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('')
}
