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
const HEADER = new Uint8Array([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff])
const STORED_MAX = 0xffff

export async function gzipHead(deflater: Deflater, bytes: Uint8Array): Promise<GzipHead> {
  return { deflated: await deflater.deflateOpen(bytes), crc: deflater.crc32(bytes), length: bytes.byteLength }
}

/**
 * The gzip member of head's bytes followed by `tail` (at most 65 535 bytes), as the chunks to send
 * in order: the compressed head is shared by every call, never copied.
 */
export function gzipWithTail(deflater: Deflater, head: GzipHead, tail: Uint8Array): Uint8Array[] {
  if (tail.byteLength > STORED_MAX) throw new RangeError('a gzip tail is one stored block: at most 65535 bytes')
  const end = new Uint8Array(5 + tail.byteLength + 8)
  const view = new DataView(end.buffer)
  // BFINAL = 1, BTYPE = 00 (stored), then LEN and its one's complement, little-endian.
  end[0] = 1
  view.setUint16(1, tail.byteLength, true)
  view.setUint16(3, ~tail.byteLength & 0xffff, true)
  end.set(tail, 5)
  view.setUint32(5 + tail.byteLength, deflater.crc32(tail, head.crc) >>> 0, true)
  view.setUint32(9 + tail.byteLength, (head.length + tail.byteLength) >>> 0, true)
  return [HEADER, head.deflated, end]
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
