// Finite State Entropy tables (RFC 8878 4.1): the decoding table a normalized distribution defines,
// and, from it, the encoder's inverse. An FSE decoder in state u emits symbol[u], then reads
// bits[u] bits and moves to baseline[u] + those bits; the encoder runs the same walk backwards.

export interface FseTable {
  log: number
  symbol: Uint8Array
  bits: Uint8Array
  baseline: Uint16Array
}

/** The decoding table of a normalized distribution (its counts sum to 2^log, -1 counting as 1). */
export function fseTable(distribution: ArrayLike<number>, log: number): FseTable {
  const size = 1 << log
  const mask = size - 1
  const symbol = new Uint8Array(size)
  const next = new Uint32Array(distribution.length)
  // "Less than 1" symbols take one cell each at the top of the table.
  let high = size - 1
  for (let s = 0; s < distribution.length; s++) {
    if (distribution[s] === -1) {
      symbol[high--] = s
      next[s] = 1
    } else next[s] = distribution[s]!
  }
  // The others are spread with a fixed step, which visits every cell once as size is a power of 2.
  const step = (size >>> 1) + (size >>> 3) + 3
  let position = 0
  for (let s = 0; s < distribution.length; s++) {
    for (let i = 0; i < distribution[s]!; i++) {
      symbol[position] = s
      do position = (position + step) & mask
      while (position > high)
    }
  }
  if (position !== 0) throw new Error('zstd: FSE distribution does not fill its table')
  const bits = new Uint8Array(size)
  const baseline = new Uint16Array(size)
  for (let u = 0; u < size; u++) {
    const s = symbol[u]!
    const n = next[s]!
    next[s] = n + 1
    const b = log - (31 - Math.clz32(n))
    bits[u] = b
    baseline[u] = (n << b) - size
  }
  return { log, symbol, bits, baseline }
}

/**
 * The encoder's view: for symbol s and the state x the decoder must reach next, the state u to
 * stand in (u emits s, and x is in u's range [baseline, baseline + 2^bits)).
 * Indexed s * size + x; -1 where s has no cell.
 */
export function fseEncoding(table: FseTable, symbols: number): Int16Array {
  const size = 1 << table.log
  const into = new Int16Array(symbols * size).fill(-1)
  for (let u = 0; u < size; u++) {
    const s = table.symbol[u]!
    const from = table.baseline[u]!
    for (let x = from; x < from + (1 << table.bits[u]!); x++) into[s * size + x] = u
  }
  return into
}
