// The Literals section of a compressed block (RFC 8878 3.1.1.3.1): the bytes no match covers,
// stored raw, as one repeated byte (RLE), or Huffman-coded when that is smaller.
import { huffmanLiterals } from './huffman-encode.js'

/** Header of a Raw or RLE literals section: 1, 2 or 3 bytes by the size it must hold. */
function rawHeader(type: 0 | 1, size: number): Uint8Array {
  if (size < 32) return Uint8Array.of(type | (size << 3))
  if (size < 4096) return Uint8Array.of(type | (1 << 2) | ((size & 0x0f) << 4), size >>> 4)
  return Uint8Array.of(type | (3 << 2) | ((size & 0x0f) << 4), (size >>> 4) & 0xff, size >>> 12)
}

export function encodeLiterals(literals: Uint8Array): Uint8Array {
  const n = literals.length
  let same = n > 0
  for (let i = 1; i < n && same; i++) same = literals[i] === literals[0]
  if (same && n > 1) {
    const header = rawHeader(1, n)
    const out = new Uint8Array(header.length + 1)
    out.set(header)
    out[header.length] = literals[0]!
    return out
  }
  const header = rawHeader(0, n)
  const raw = new Uint8Array(header.length + n)
  raw.set(header)
  raw.set(literals, header.length)
  const coded = n >= 64 ? huffmanLiterals(literals) : null
  return coded !== null && coded.length < raw.length ? coded : raw
}
