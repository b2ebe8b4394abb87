// Reading the backward bit stream of FSE and Huffman payloads (see bit-writer.ts): from the bit
// below the end mark in the last byte, down to bit 0 of the first. Reads past the start give
// zeros, and `exhausted` tells whether the stream was consumed exactly, which a valid one is.

export class BitReader {
  private position: number

  constructor(private readonly bytes: Uint8Array, private readonly start: number, private readonly end: number) {
    if (end <= start) throw new Error('zstd: empty bit stream')
    const last = bytes[end - 1]!
    if (last === 0) throw new Error('zstd: bit stream without its end mark')
    this.position = (end - start - 1) * 8 + (31 - Math.clz32(last))
  }

  /** The next n bits (n <= 31), highest first. */
  read(n: number): number {
    if (n === 0) return 0
    if (n > 24) {
      const high = this.read(n - 24)
      return high * 0x1000000 + this.read(24)
    }
    this.position -= n
    let at = this.position
    let value = 0
    let shift = 0
    if (at < 0) {
      // Bits below the start read as zeros.
      shift = -at
      n -= shift
      at = 0
    }
    const byte = this.start + (at >>> 3)
    const word = (this.bytes[byte] ?? 0) | ((this.bytes[byte + 1] ?? 0) << 8) | ((this.bytes[byte + 2] ?? 0) << 16) | ((this.bytes[byte + 3] ?? 0) << 24)
    value = ((word >>> (at & 7)) & ((1 << n) - 1)) << shift
    return value >>> 0
  }

  /** The next n bits without consuming them. */
  peek(n: number): number {
    const value = this.read(n)
    this.position += n
    return value
  }

  skip(n: number): void {
    this.position -= n
  }

  get exhausted(): boolean {
    return this.position === 0
  }

  get overrun(): boolean {
    return this.position < 0
  }
}
