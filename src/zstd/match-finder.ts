// LZ77 matches for one block: a hash of the next four bytes leads to the newest earlier position
// with that hash, and a chain links each position to the previous one with the same hash. Memory is
// fixed by the window: the chain has one slot per window byte, reused as the window slides.
// Repeat offsets are tried first, since a repeat costs almost nothing to code.
import type { Sequences } from './sequences-encode.js'

const HASH_LOG = 16
/** Chain links followed per position: deeper finds longer matches, at a cost in speed. */
const SEARCH_DEPTH = 16
const MIN_MATCH = 4

export interface ParsedBlock {
  sequences: Sequences
  literals: Uint8Array
}

export class MatchFinder {
  // Both tables hold position + 1, so 0 means none and a fresh (zeroed) table needs no fill: a
  // writer per small object then costs no more than the memory the system hands over.
  private readonly head = new Int32Array(1 << HASH_LOG)
  private readonly chain: Int32Array
  private readonly mask: number
  private readonly literals: Uint8Array
  private readonly literalLength: Uint32Array
  private readonly matchLength: Uint32Array
  private readonly offsetValue: Uint32Array

  /** window: a power of two, the largest offset used; blockMax: the largest block parsed. */
  constructor(private readonly window: number, blockMax: number) {
    this.chain = new Int32Array(window)
    this.mask = window - 1
    this.literals = new Uint8Array(blockMax)
    const most = (blockMax >>> 2) + 1
    this.literalLength = new Uint32Array(most)
    this.matchLength = new Uint32Array(most)
    this.offsetValue = new Uint32Array(most)
  }

  /** Positions in the buffer moved down by `by` (the writer dropped that many old bytes). */
  rebase(by: number): void {
    for (const table of [this.head, this.chain]) {
      for (let i = 0; i < table.length; i++) table[i] = table[i]! > by ? table[i]! - by : 0
    }
  }

  /**
   * Sequences and literals of buf[start, end), with earlier bytes of buf as history. reps (the
   * frame's three repeat offsets) is updated as the decoder will update it.
   */
  parse(buf: Uint8Array, start: number, end: number, reps: Uint32Array): ParsedBlock {
    const { head, chain, mask, window } = this
    const hashAt = (p: number) =>
      Math.imul(buf[p]! | (buf[p + 1]! << 8) | (buf[p + 2]! << 16) | (buf[p + 3]! << 24), 0x9e3779b1) >>> (32 - HASH_LOG)
    const insert = (p: number) => {
      const h = hashAt(p)
      chain[p & mask] = head[h]!
      head[h] = p + 1
    }
    const extend = (from: number, at: number) => {
      let n = 0
      while (at + n < end && buf[from + n] === buf[at + n]) n++
      return n
    }
    let count = 0
    let literalCount = 0
    let anchor = start
    let ip = start
    const last = end - MIN_MATCH
    // The longest match at p (repeat offsets first, then the chain), in best/bestOffset; inserts p.
    let best = 0
    let bestOffset = 0
    // Positions up to here are in the chain already (a position inserted twice would link to itself).
    let searched = start - 1
    const search = (p: number) => {
      searched = p
      best = 0
      bestOffset = 0
      for (let r = 0; r < 3; r++) {
        const offset = reps[r]!
        const from = p - offset
        if (from < 0 || offset >= window) continue
        if (buf[from] !== buf[p] || buf[from + best] !== buf[p + best]) continue
        const n = extend(from, p)
        if (n > best) {
          best = n
          bestOffset = offset
        }
      }
      const h = hashAt(p)
      let candidate = head[h]! - 1
      for (let depth = SEARCH_DEPTH; candidate >= 0 && depth > 0 && p - candidate < window; depth--) {
        if (buf[candidate + best]! === buf[p + best]! && buf[candidate]! === buf[p]!) {
          const n = extend(candidate, p)
          if (n > best) {
            best = n
            bestOffset = p - candidate
          }
        }
        const next = chain[candidate & mask]! - 1
        if (next >= candidate) break
        candidate = next
      }
      chain[p & mask] = head[h]!
      head[h] = p + 1
      // A short match far back costs more bits (offset code, extra bits) than the Huffman-coded
      // literals it replaces, so the further it reaches the longer it must be; repeats are cheap.
      const repeat = bestOffset === reps[0] || bestOffset === reps[1] || bestOffset === reps[2]
      if (best < MIN_MATCH || (!repeat && best < (bestOffset <= 1024 ? 4 : bestOffset <= 65536 ? 6 : 7))) best = 0
    }
    while (ip <= last) {
      search(ip)
      if (best === 0) {
        // Far from the last match the data is likely incompressible: look at fewer positions.
        ip += 1 + ((ip - anchor) >>> 8)
        continue
      }
      // Lazy step: a longer match one byte on is worth a literal.
      while (ip + 1 <= last) {
        const [length, offset] = [best, bestOffset]
        search(ip + 1)
        if (best > length + 1) {
          ip++
          continue
        }
        best = length
        bestOffset = offset
        break
      }
      const literalLength = ip - anchor
      this.literals.set(buf.subarray(anchor, ip), literalCount)
      literalCount += literalLength
      this.literalLength[count] = literalLength
      this.matchLength[count] = best
      this.offsetValue[count] = codeOffset(bestOffset, literalLength, reps)
      count++
      const stop = Math.min(ip + best, last + 1)
      for (let p = Math.max(ip + 1, searched + 1); p < stop; p++) insert(p)
      ip += best
      anchor = ip
    }
    this.literals.set(buf.subarray(anchor, end), literalCount)
    literalCount += end - anchor
    return {
      sequences: { count, literalLength: this.literalLength, matchLength: this.matchLength, offsetValue: this.offsetValue },
      literals: this.literals.subarray(0, literalCount),
    }
  }
}

/**
 * The Offset_Value that sends `offset` (a repeat code when one of the three repeat offsets holds
 * it), updating reps exactly as RFC 8878 3.1.2.5 has the decoder do.
 */
export function codeOffset(offset: number, literalLength: number, reps: Uint32Array): number {
  // Which repeat slot each code means depends on whether literals precede the match.
  let code = 0
  if (literalLength > 0) {
    if (offset === reps[0]) code = 1
    else if (offset === reps[1]) code = 2
    else if (offset === reps[2]) code = 3
  } else {
    if (offset === reps[1]) code = 1
    else if (offset === reps[2]) code = 2
    else if (offset === reps[0]! - 1) code = 3
  }
  if (code === 0) {
    reps[2] = reps[1]!
    reps[1] = reps[0]!
    reps[0] = offset
    return offset + 3
  }
  const slot = code - 1 + (literalLength === 0 ? 1 : 0)
  if (slot === 1) {
    reps[1] = reps[0]!
    reps[0] = offset
  } else if (slot >= 2) {
    reps[2] = reps[1]!
    reps[1] = reps[0]!
    reps[0] = offset
  }
  return code
}
