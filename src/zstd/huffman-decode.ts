// Huffman-coded literals, read side (RFC 8878 4.2): the tree description (weights, direct or
// FSE-compressed) and the one or four streams it decodes.
import { BitReader } from './bit-reader.js'
import { readFseDescription } from './fse-description.js'

export interface HuffmanTable {
  maxBits: number
  /** Indexed by the next maxBits bits: the symbol and how many of those bits its code uses. */
  symbol: Uint8Array
  bits: Uint8Array
}

/** The table defined by the weights of symbols 0..n-1 (the last symbol's weight is implied). */
export function huffmanFromWeights(weights: number[]): HuffmanTable {
  let sum = 0
  for (const w of weights) if (w > 0) sum += 1 << (w - 1)
  if (sum === 0) throw new Error('zstd: Huffman weights all zero')
  const maxBits = 32 - Math.clz32(sum)
  const left = (1 << maxBits) - sum
  if ((left & (left - 1)) !== 0) throw new Error('zstd: Huffman weights do not complete a tree')
  const all = [...weights, 32 - Math.clz32(left)]
  if (maxBits > 11) throw new Error('zstd: Huffman code longer than 11 bits')
  const size = 1 << maxBits
  const symbol = new Uint8Array(size)
  const bits = new Uint8Array(size)
  let next = 0
  // Longest codes (lowest weights) first, each symbol in order within a weight.
  for (let w = 1; w <= maxBits; w++) {
    for (let s = 0; s < all.length; s++) {
      if (all[s] !== w) continue
      const length = maxBits + 1 - w
      const span = 1 << (maxBits - length)
      symbol.fill(s, next, next + span)
      bits.fill(length, next, next + span)
      next += span
    }
  }
  return { maxBits, symbol, bits }
}

/** Reads a tree description at start; returns the table and the bytes it took. */
export function readHuffmanTree(bytes: Uint8Array, start: number): { table: HuffmanTable; size: number } {
  const header = bytes[start]
  if (header === undefined) throw new Error('zstd: truncated Huffman tree')
  const weights: number[] = []
  if (header >= 128) {
    const count = header - 127
    for (let i = 0; i < count; i++) {
      const b = bytes[start + 1 + (i >>> 1)]!
      weights.push(i % 2 === 0 ? b >>> 4 : b & 0x0f)
    }
    return { table: huffmanFromWeights(weights), size: 1 + ((count + 1) >>> 1) }
  }
  // FSE-compressed weights: two states share one stream, taking turns.
  const { table: fse, size } = readFseDescription(bytes, start + 1, 6, 12)
  const reader = new BitReader(bytes, start + 1 + size, start + 1 + header)
  const states = [reader.read(fse.log), reader.read(fse.log)]
  for (let turn = 0; weights.length < 255; turn ^= 1) {
    const state = states[turn]!
    weights.push(fse.symbol[state]!)
    states[turn] = fse.baseline[state]! + reader.read(fse.bits[state]!)
    if (reader.overrun) {
      weights.push(fse.symbol[states[turn ^ 1]!]!)
      break
    }
  }
  return { table: huffmanFromWeights(weights), size: 1 + header }
}

/** Decodes `count` symbols from the stream bytes[start, end) into out at `at`. */
export function decodeHuffmanStream(table: HuffmanTable, bytes: Uint8Array, start: number, end: number, out: Uint8Array, at: number, count: number): void {
  const reader = new BitReader(bytes, start, end)
  for (let i = 0; i < count; i++) {
    const index = reader.peek(table.maxBits)
    out[at + i] = table.symbol[index]!
    reader.skip(table.bits[index]!)
  }
  if (!reader.exhausted) throw new Error('zstd: Huffman stream not consumed exactly')
}
