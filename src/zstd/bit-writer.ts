// The bit stream of FSE and Huffman payloads: fields are appended from the lowest bit of the first
// byte upwards, closed by a single 1 bit, and read back by the decoder from the last byte down.
// So the encoder writes fields in the reverse of the order the decoder consumes them.

export class BitWriter {
  private bytes: Uint8Array
  private length = 0
  // Pending bits, low first; at most 7 + 25 bits are ever held, so 32-bit operations suffice.
  private acc = 0
  private count = 0

  constructor(capacity: number) {
    this.bytes = new Uint8Array(Math.max(16, capacity))
  }

  /** Appends the low n bits of value (n <= 25). */
  add(value: number, n: number): void {
    this.acc |= (value & ((1 << n) - 1)) << this.count
    this.count += n
    while (this.count >= 8) {
      if (this.length === this.bytes.length) this.grow()
      this.bytes[this.length++] = this.acc & 0xff
      this.acc >>>= 8
      this.count -= 8
    }
  }

  /** Appends a field of up to 31 bits in two steps. */
  addWide(value: number, n: number): void {
    if (n <= 24) return this.add(value, n)
    this.add(value & 0xffffff, 24)
    this.add(value >>> 24, n - 24)
  }

  /** The stream closed by its end mark, padded with zeros to a byte. */
  close(): Uint8Array {
    this.add(1, 1)
    if (this.count > 0) this.add(0, 8 - this.count)
    return this.bytes.subarray(0, this.length)
  }

  private grow(): void {
    const next = new Uint8Array(this.bytes.length * 2)
    next.set(this.bytes)
    this.bytes = next
  }
}
