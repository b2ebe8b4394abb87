// The Sequences section, read side (RFC 8878 3.1.1.3.2): the three symbol streams' tables
// (predefined, RLE, described, or repeated from the previous block) and the sequences themselves.
import { BitReader } from './bit-reader.js'
import {
  LL_BASELINE, LL_DEFAULT, LL_DEFAULT_LOG, LL_EXTRA, ML_BASELINE, ML_DEFAULT, ML_DEFAULT_LOG, ML_EXTRA, OF_DEFAULT, OF_DEFAULT_LOG,
} from './codes.js'
import { fseTable, type FseTable } from './fse.js'
import { readFseDescription } from './fse-description.js'

const PREDEFINED = {
  ll: fseTable(LL_DEFAULT, LL_DEFAULT_LOG),
  of: fseTable(OF_DEFAULT, OF_DEFAULT_LOG),
  ml: fseTable(ML_DEFAULT, ML_DEFAULT_LOG),
}
const LIMITS = { ll: { log: 9, symbol: 35 }, of: { log: 8, symbol: 31 }, ml: { log: 9, symbol: 52 } }

/** What one frame carries from block to block: the last tables (for Repeat mode). */
export interface SequenceTables {
  ll?: FseTable
  of?: FseTable
  ml?: FseTable
}

export interface DecodedSequences {
  count: number
  literalLength: Uint32Array
  matchLength: Uint32Array
  /** The Offset_Value as sent (repeat codes unresolved). */
  offsetValue: Uint32Array
}

function rleTable(symbol: number): FseTable {
  return { log: 0, symbol: Uint8Array.of(symbol), bits: Uint8Array.of(0), baseline: Uint16Array.of(0) }
}

export function decodeSequences(bytes: Uint8Array, start: number, end: number, tables: SequenceTables): DecodedSequences {
  let at = start
  const b0 = bytes[at++]!
  let count = b0
  if (b0 >= 128 && b0 < 255) count = ((b0 - 128) << 8) + bytes[at++]!
  else if (b0 === 255) {
    count = bytes[at]! + (bytes[at + 1]! << 8) + 0x7f00
    at += 2
  }
  const out = { count, literalLength: new Uint32Array(count), matchLength: new Uint32Array(count), offsetValue: new Uint32Array(count) }
  if (count === 0) return out
  const modes = bytes[at++]!
  const pick = (kind: 'll' | 'of' | 'ml', mode: number): FseTable => {
    if (mode === 0) return (tables[kind] = PREDEFINED[kind])
    if (mode === 1) return (tables[kind] = rleTable(bytes[at++]!))
    if (mode === 2) {
      const { table, size } = readFseDescription(bytes, at, LIMITS[kind].log, LIMITS[kind].symbol)
      at += size
      return (tables[kind] = table)
    }
    const previous = tables[kind]
    if (!previous) throw new Error('zstd: repeat mode without an earlier table')
    return previous
  }
  const ll = pick('ll', modes >>> 6)
  const of = pick('of', (modes >>> 4) & 3)
  const ml = pick('ml', (modes >>> 2) & 3)
  const reader = new BitReader(bytes, at, end)
  let llState = reader.read(ll.log)
  let ofState = reader.read(of.log)
  let mlState = reader.read(ml.log)
  for (let i = 0; i < count; i++) {
    const ofCode = of.symbol[ofState]!
    const mlCode = ml.symbol[mlState]!
    const llCode = ll.symbol[llState]!
    if (llCode > 35 || mlCode > 52 || ofCode > 31) throw new Error('zstd: sequence code out of range')
    out.offsetValue[i] = 2 ** ofCode + reader.read(ofCode)
    out.matchLength[i] = ML_BASELINE[mlCode]! + reader.read(ML_EXTRA[mlCode]!)
    out.literalLength[i] = LL_BASELINE[llCode]! + reader.read(LL_EXTRA[llCode]!)
    if (i < count - 1) {
      llState = ll.baseline[llState]! + reader.read(ll.bits[llState]!)
      mlState = ml.baseline[mlState]! + reader.read(ml.bits[mlState]!)
      ofState = of.baseline[ofState]! + reader.read(of.bits[ofState]!)
    }
  }
  if (!reader.exhausted) throw new Error('zstd: sequence stream not consumed exactly')
  return out
}
