// The Literals section, read side (RFC 8878 3.1.1.3.1): raw, RLE, or Huffman-coded in one or four
// streams, with the block's own tree or (treeless) the previous block's.
import { decodeHuffmanStream, readHuffmanTree, type HuffmanTable } from './huffman-decode.js'

export interface LiteralsState {
  huffman?: HuffmanTable
}

/** The literals of the block starting at `start`, and the bytes their section took. */
export function decodeLiterals(bytes: Uint8Array, start: number, state: LiteralsState): { literals: Uint8Array; size: number } {
  const b0 = bytes[start]!
  const type = b0 & 3
  const format = (b0 >>> 2) & 3
  const b = (i: number) => bytes[start + i] ?? 0
  if (type < 2) {
    let regenerated: number
    let header: number
    if ((format & 1) === 0) [regenerated, header] = [b0 >>> 3, 1]
    else if (format === 1) [regenerated, header] = [(b0 >>> 4) | (b(1) << 4), 2]
    else [regenerated, header] = [(b0 >>> 4) | (b(1) << 4) | (b(2) << 12), 3]
    if (type === 0) {
      if (start + header + regenerated > bytes.length) throw new Error('zstd: truncated raw literals')
      return { literals: bytes.subarray(start + header, start + header + regenerated), size: header + regenerated }
    }
    return { literals: new Uint8Array(regenerated).fill(b(header)), size: header + 1 }
  }
  let regenerated: number
  let compressed: number
  let header: number
  if (format < 2) {
    regenerated = (b0 >>> 4) | ((b(1) & 0x3f) << 4)
    compressed = (b(1) >>> 6) | (b(2) << 2)
    header = 3
  } else if (format === 2) {
    regenerated = (b0 >>> 4) | (b(1) << 4) | ((b(2) & 3) << 12)
    compressed = (b(2) >>> 2) | (b(3) << 6)
    header = 4
  } else {
    regenerated = (b0 >>> 4) | (b(1) << 4) | ((b(2) & 0x3f) << 12)
    compressed = (b(2) >>> 6) | (b(3) << 2) | (b(4) << 10)
    header = 5
  }
  let at = start + header
  const end = at + compressed
  if (end > bytes.length) throw new Error('zstd: truncated Huffman literals')
  if (type === 2) {
    const tree = readHuffmanTree(bytes, at)
    state.huffman = tree.table
    at += tree.size
  }
  const table = state.huffman
  if (!table) throw new Error('zstd: treeless literals without an earlier tree')
  const literals = new Uint8Array(regenerated)
  if (format === 0) decodeHuffmanStream(table, bytes, at, end, literals, 0, regenerated)
  else {
    const sizes = [bytes[at]! | (bytes[at + 1]! << 8), bytes[at + 2]! | (bytes[at + 3]! << 8), bytes[at + 4]! | (bytes[at + 5]! << 8)]
    at += 6
    const each = (regenerated + 3) >>> 2
    let from = at
    for (let i = 0; i < 4; i++) {
      const to = i < 3 ? from + sizes[i]! : end
      const n = i < 3 ? each : regenerated - 3 * each
      decodeHuffmanStream(table, bytes, from, to, literals, i * each, n)
      from = to
    }
  }
  return { literals, size: header + compressed }
}
