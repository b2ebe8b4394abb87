// An FSE table description (RFC 8878 4.1.1): the normalized distribution a compressed block may send
// for its literal lengths, match lengths, offsets or Huffman weights, read from a forward bit
// stream. Only a decoder meets these: the sink's own encoder always uses predefined tables.
import { fseTable, type FseTable } from './fse.js'

export function readFseDescription(bytes: Uint8Array, start: number, maxLog: number, maxSymbol: number): { table: FseTable; size: number } {
  let bit = 0
  const peek = (n: number) => {
    let v = 0
    for (let i = 0; i < n; i++) {
      const at = bit + i
      const b = bytes[start + (at >>> 3)]
      if (b === undefined) throw new Error('zstd: truncated FSE table description')
      v |= ((b >>> (at & 7)) & 1) << i
    }
    return v
  }
  const read = (n: number) => {
    const v = peek(n)
    bit += n
    return v
  }
  const log = read(4) + 5
  if (log > maxLog) throw new Error(`zstd: FSE accuracy log ${log} above ${maxLog}`)
  const distribution: number[] = []
  let remaining = (1 << log) + 1
  let threshold = 1 << log
  let bits = log + 1
  while (remaining > 1 && distribution.length <= maxSymbol) {
    const most = 2 * threshold - 1 - remaining
    let value: number
    const low = peek(bits - 1)
    if (low < most) {
      value = low
      bit += bits - 1
    } else {
      value = peek(bits)
      if (value >= threshold) value -= most
      bit += bits
    }
    const probability = value - 1
    remaining -= Math.abs(probability)
    distribution.push(probability)
    if (probability === 0) {
      // A zero is followed by 2-bit counts of further zeros; 3 means "three, and more follow".
      for (;;) {
        const more = read(2)
        for (let i = 0; i < more; i++) distribution.push(0)
        if (more !== 3) break
      }
    }
    while (remaining < threshold) {
      bits--
      threshold >>>= 1
    }
  }
  if (remaining !== 1 || distribution.length > maxSymbol + 1) throw new Error('zstd: corrupt FSE table description')
  return { table: fseTable(distribution, log), size: (bit + 7) >>> 3 }
}
