// Huffman-coded literals (RFC 8878 4.2): code lengths of at most 11 bits from the literals' byte
// counts, sent as 4-bit weights ("direct" representation, which covers symbols up to 128: JSON
// text is ASCII), then the literals in one stream (up to 1023 of them) or four. Literals with a
// byte above 128 stay raw: their weights would need an FSE-compressed description.
import { BitWriter } from './bit-writer.js'

const MAX_BITS = 11
const MAX_DIRECT_SYMBOL = 128

/** Code lengths of a Huffman code over the counts, none longer than MAX_BITS (counts are flattened until it fits). */
function codeLengths(counts: Uint32Array, maxSymbol: number): Uint8Array {
  const freq = Array.from(counts.subarray(0, maxSymbol + 1))
  for (;;) {
    const leaves: number[] = []
    for (let s = 0; s <= maxSymbol; s++) if (freq[s]! > 0) leaves.push(s)
    leaves.sort((a, b) => freq[a]! - freq[b]! || a - b)
    const n = leaves.length
    const weight = new Float64Array(2 * n)
    const parent = new Int32Array(2 * n)
    for (let i = 0; i < n; i++) weight[i] = freq[leaves[i]!]!
    // Two queues: the sorted leaves and the internal nodes, which are created in rising weight.
    let leaf = 0
    let inner = n
    let next = n
    const smallest = () => (leaf < n && (inner >= next || weight[leaf]! <= weight[inner]!) ? leaf++ : inner++)
    for (let k = 0; k < n - 1; k++) {
      const a = smallest()
      const b = smallest()
      weight[next] = weight[a]! + weight[b]!
      parent[a] = next
      parent[b] = next
      next++
    }
    const depth = new Uint8Array(2 * n)
    for (let i = next - 2; i >= 0; i--) depth[i] = depth[parent[i]!]! + 1
    const lengths = new Uint8Array(maxSymbol + 1)
    let longest = 0
    for (let i = 0; i < n; i++) {
      lengths[leaves[i]!] = depth[i]!
      longest = Math.max(longest, depth[i]!)
    }
    if (longest <= MAX_BITS) return lengths
    for (let s = 0; s <= maxSymbol; s++) if (freq[s]! > 0) freq[s] = (freq[s]! + 1) >>> 1
  }
}

/** The section (header, tree, streams), or null when Huffman cannot apply or does not pay. */
export function huffmanLiterals(literals: Uint8Array): Uint8Array | null {
  const n = literals.length
  if (n > 262_143) return null
  const counts = new Uint32Array(256)
  for (let i = 0; i < n; i++) counts[literals[i]!]!++
  let maxSymbol = 255
  while (counts[maxSymbol] === 0) maxSymbol--
  if (maxSymbol > MAX_DIRECT_SYMBOL) return null
  let distinct = 0
  for (let s = 0; s <= maxSymbol; s++) if (counts[s]! > 0) distinct++
  if (distinct < 2) return null
  const lengths = codeLengths(counts, maxSymbol)
  let longest = 0
  for (const l of lengths) longest = Math.max(longest, l)
  // Canonical codes as the decoder rebuilds them: longest codes first, symbols in order within a length.
  const codes = new Uint16Array(maxSymbol + 1)
  let index = 0
  for (let length = longest; length >= 1; length--) {
    for (let s = 0; s <= maxSymbol; s++) {
      if (lengths[s] !== length) continue
      codes[s] = index >>> (longest - length)
      index += 1 << (longest - length)
    }
  }
  // Weights of symbols 0..maxSymbol-1; the last symbol's is implied by the others.
  const tree = new Uint8Array(1 + ((maxSymbol + 1) >>> 1))
  tree[0] = 127 + maxSymbol
  for (let s = 0; s < maxSymbol; s++) {
    const weight = lengths[s]! > 0 ? longest + 1 - lengths[s]! : 0
    tree[1 + (s >>> 1)]! |= s % 2 === 0 ? weight << 4 : weight
  }
  const stream = (from: number, to: number) => {
    const out = new BitWriter(((to - from) * longest) / 8 + 8)
    // The decoder reads the stream from its end: the last literal is written first.
    for (let i = to - 1; i >= from; i--) {
      const s = literals[i]!
      out.add(codes[s]!, lengths[s]!)
    }
    return out.close()
  }
  const parts: Uint8Array[] = []
  if (n <= 1023) parts.push(stream(0, n))
  else {
    const each = (n + 3) >>> 2
    const streams = [stream(0, each), stream(each, 2 * each), stream(2 * each, 3 * each), stream(3 * each, n)]
    if (streams.slice(0, 3).some((s) => s.length > 0xffff)) return null
    const jump = new Uint8Array(6)
    streams.slice(0, 3).forEach((s, i) => {
      jump[i * 2] = s.length & 0xff
      jump[i * 2 + 1] = s.length >>> 8
    })
    parts.push(jump, ...streams)
  }
  const compressed = tree.length + parts.reduce((sum, p) => sum + p.length, 0)
  let header: number[]
  if (n <= 1023 && compressed <= 1023) header = [2 | ((n & 0x0f) << 4), (n >>> 4) | ((compressed & 0x03) << 6), compressed >>> 2]
  else if (n <= 1023) return null
  else if (compressed <= 1023 && n <= 1023) header = [2 | (1 << 2) | ((n & 0x0f) << 4), (n >>> 4) | ((compressed & 0x03) << 6), compressed >>> 2]
  else if (n <= 16383 && compressed <= 16383) header = [2 | (2 << 2) | ((n & 0x0f) << 4), (n >>> 4) & 0xff, (n >>> 12) | ((compressed & 0x3f) << 2), compressed >>> 6]
  else if (compressed <= 262_143) header = [2 | (3 << 2) | ((n & 0x0f) << 4), (n >>> 4) & 0xff, ((n >>> 12) & 0x3f) | ((compressed & 0x03) << 6), (compressed >>> 2) & 0xff, compressed >>> 10]
  else return null
  const out = new Uint8Array(header.length + compressed)
  out.set(header)
  let at = header.length
  for (const p of [tree, ...parts]) {
    out.set(p, at)
    at += p.length
  }
  return out
}
