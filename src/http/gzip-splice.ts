// A gzip answer spliced from a large part compressed once and a few bytes that change per call, so
// a big cached body (the `?stats=cached` listing: 2.4 MiB at 10 000 queues, ~300 KiB compressed) is
// compressed once per version instead of once per request, and no request waits on a compressor.
//
// The once-compressed head is raw deflate ended by a sync flush: byte-aligned and not final
// (RFC 1951 3.2.3). The per-call tail follows as one final stored block, and the trailer's CRC-32
// continues from the head's (RFC 1952 2.3). Any gzip decoder reads the result as one member.
// Runtime-free: the runtime that has a compressor hands one in (src/node.ts); Workers has none to
// hand, and Cloudflare compresses a Worker's JSON answers at its edge anyway.

export interface Deflater {
  /** Raw deflate (RFC 1951) of `bytes`, ended by a sync flush instead of a final block. */
  deflateOpen(bytes: Uint8Array): Promise<Uint8Array>
  /** CRC-32 of `bytes`, continuing from `value` (0: from the start). */
  crc32(bytes: Uint8Array, value?: number): number
}

export interface GzipHead {
  deflated: Uint8Array
  crc: number
  length: number
}

// ID1 ID2, CM = deflate, no flags, no mtime, no extra flags, OS unknown.
const HEADER = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]
const STORED_MAX = 0xffff

export async function gzipHead(deflater: Deflater, bytes: Uint8Array): Promise<GzipHead> {
  return { deflated: await deflater.deflateOpen(bytes), crc: deflater.crc32(bytes), length: bytes.byteLength }
}

/** The gzip member of head's bytes followed by `tail` (at most 65 535 bytes). */
export function gzipWithTail(deflater: Deflater, head: GzipHead, tail: Uint8Array): Uint8Array<ArrayBuffer> {
  if (tail.byteLength > STORED_MAX) throw new RangeError('a gzip tail is one stored block: at most 65535 bytes')
  const out = new Uint8Array(HEADER.length + head.deflated.byteLength + 5 + tail.byteLength + 8)
  const view = new DataView(out.buffer)
  out.set(HEADER)
  let at = HEADER.length
  out.set(head.deflated, at)
  at += head.deflated.byteLength
  // BFINAL = 1, BTYPE = 00 (stored), then LEN and its one's complement, little-endian.
  out[at] = 1
  view.setUint16(at + 1, tail.byteLength, true)
  view.setUint16(at + 3, ~tail.byteLength & 0xffff, true)
  out.set(tail, at + 5)
  at += 5 + tail.byteLength
  view.setUint32(at, deflater.crc32(tail, head.crc) >>> 0, true)
  view.setUint32(at + 4, (head.length + tail.byteLength) >>> 0, true)
  return out
}

/** Whether an Accept-Encoding header admits gzip (a `gzip`, `x-gzip` or `*` coding without q=0). */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false
  let star = false
  for (const item of header.split(',')) {
    const [coding = '', ...params] = item.split(';').map((part) => part.trim().toLowerCase())
    const q = params.find((p) => p.startsWith('q='))
    const allowed = q === undefined || Number(q.slice(2)) > 0
    if (coding === 'gzip' || coding === 'x-gzip') return allowed
    if (coding === '*') star = allowed
  }
  return star
}
