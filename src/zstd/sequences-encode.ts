// The Sequences section of a compressed block (RFC 8878 3.1.1.3.2), with the three predefined
// distributions only: no table description is written, which costs a little ratio on large
// blocks and keeps the encoder small and its output a function of the sequences alone.
import { BitWriter } from './bit-writer.js'
import {
  LL_BASELINE, LL_DEFAULT, LL_DEFAULT_LOG, LL_EXTRA, ML_BASELINE, ML_DEFAULT, ML_DEFAULT_LOG, ML_EXTRA, OF_DEFAULT,
  OF_DEFAULT_LOG, highBit, literalLengthCode, matchLengthCode,
} from './codes.js'
import { fseEncoding, fseTable, type FseTable } from './fse.js'

interface Coder {
  table: FseTable
  encode: Int16Array
  size: number
}

function coder(distribution: Int16Array, log: number): Coder {
  const table = fseTable(distribution, log)
  return { table, encode: fseEncoding(table, distribution.length), size: 1 << log }
}

const LL = coder(LL_DEFAULT, LL_DEFAULT_LOG)
const ML = coder(ML_DEFAULT, ML_DEFAULT_LOG)
const OF = coder(OF_DEFAULT, OF_DEFAULT_LOG)
/** The largest offset code the predefined offset distribution has a cell for. */
export const MAX_OFFSET_CODE = OF_DEFAULT.length - 1

/** A block's sequences as parallel arrays; offsetValue is already the coded Offset_Value (repeat codes 1-3, else offset + 3). */
export interface Sequences {
  count: number
  literalLength: Uint32Array
  matchLength: Uint32Array
  offsetValue: Uint32Array
}

/** The first state of symbol s: any of its cells will do for the last sequence. */
function firstState(c: Coder, s: number): number {
  for (let x = 0; x < c.size; x++) {
    const u = c.encode[s * c.size + x]!
    if (u >= 0) return u
  }
  throw new Error(`zstd: symbol ${s} has no cell`)
}

/** Moves coder c to symbol s from state x (the state the decoder reaches next), writing the bits the decoder reads. */
function step(c: Coder, s: number, x: number, out: BitWriter): number {
  const u = c.encode[s * c.size + x]!
  out.add(x - c.table.baseline[u]!, c.table.bits[u]!)
  return u
}

export function encodeSequences(seq: Sequences): Uint8Array {
  const n = seq.count
  const header: number[] = []
  if (n < 128) header.push(n)
  else if (n < 0x7f00) header.push((n >>> 8) + 128, n & 0xff)
  else header.push(0xff, (n - 0x7f00) & 0xff, (n - 0x7f00) >>> 8)
  if (n === 0) return Uint8Array.from(header)
  header.push(0) // all three symbol streams use their predefined distributions
  const out = new BitWriter(n * 6 + 16)
  const llCode = new Uint8Array(n)
  const mlCode = new Uint8Array(n)
  const ofCode = new Uint8Array(n)
  for (let i = 0; i < n; i++) {
    llCode[i] = literalLengthCode(seq.literalLength[i]!)
    mlCode[i] = matchLengthCode(seq.matchLength[i]!)
    ofCode[i] = highBit(seq.offsetValue[i]!)
  }
  // The decoder reads, per sequence: offset, match and literal extra bits, then updates the
  // literal, match and offset states. Written here in reverse, from the last sequence.
  const extras = (i: number) => {
    out.add(seq.literalLength[i]! - LL_BASELINE[llCode[i]!]!, LL_EXTRA[llCode[i]!]!)
    out.add(seq.matchLength[i]! - ML_BASELINE[mlCode[i]!]!, ML_EXTRA[mlCode[i]!]!)
    out.addWide(seq.offsetValue[i]! - 2 ** ofCode[i]!, ofCode[i]!)
  }
  let ll = firstState(LL, llCode[n - 1]!)
  let ml = firstState(ML, mlCode[n - 1]!)
  let of = firstState(OF, ofCode[n - 1]!)
  extras(n - 1)
  for (let i = n - 2; i >= 0; i--) {
    of = step(OF, ofCode[i]!, of, out)
    ml = step(ML, mlCode[i]!, ml, out)
    ll = step(LL, llCode[i]!, ll, out)
    extras(i)
  }
  out.add(ml, ML_DEFAULT_LOG)
  out.add(of, OF_DEFAULT_LOG)
  out.add(ll, LL_DEFAULT_LOG)
  const bits = out.close()
  const section = new Uint8Array(header.length + bits.length)
  section.set(header)
  section.set(bits, header.length)
  return section
}
