// XXH64 (seed 0), the checksum a zstd frame ends with (its low 32 bits). Plain 32-bit integer
// arithmetic on (high, low) halves rather than BigInt, which is an order of magnitude slower on
// the multi-megabyte parts the sink writes. Incremental, so a frame can be hashed block by block.

const P1H = 0x9e3779b1, P1L = 0x85ebca87
const P2H = 0xc2b2ae3d, P2L = 0x27d4eb4f
const P3H = 0x165667b1, P3L = 0x9e3779f9
const P4H = 0x85ebca77, P4L = 0xc2b2ae63
const P5H = 0x27d4eb2f, P5L = 0x165667c5

// Results of the 64-bit helpers below: one pair of globals avoids an allocation per operation.
let rh = 0
let rl = 0

/** (ah:al) * (bh:bl) mod 2^64 into rh:rl. */
function mul(ah: number, al: number, bh: number, bl: number): void {
  const a0 = al & 0xffff, a1 = al >>> 16, b0 = bl & 0xffff, b1 = bl >>> 16
  const p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0
  const mid = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff)
  rl = (((mid & 0xffff) << 16) | (p00 & 0xffff)) >>> 0
  const high = a1 * b1 + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16)
  rh = (high + Math.imul(ah, bl) + Math.imul(al, bh)) >>> 0
}

/** (ah:al) + (bh:bl) mod 2^64 into rh:rl. */
function add(ah: number, al: number, bh: number, bl: number): void {
  const low = (al >>> 0) + (bl >>> 0)
  rl = low >>> 0
  rh = (ah + bh + (low > 0xffffffff ? 1 : 0)) >>> 0
}

/** Rotate (h:l) left by n (0 < n < 32) into rh:rl. */
function rotl(h: number, l: number, n: number): void {
  rh = ((h << n) | (l >>> (32 - n))) >>> 0
  rl = ((l << n) | (h >>> (32 - n))) >>> 0
}

/** round(acc, lane) = rotl(acc + lane * P2, 31) * P1, into rh:rl. */
function round(ah: number, al: number, lh: number, ll: number): void {
  mul(lh, ll, P2H, P2L)
  add(ah, al, rh, rl)
  rotl(rh, rl, 31)
  mul(rh, rl, P1H, P1L)
}

const read32 = (b: Uint8Array, i: number) => (b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24)) >>> 0

export class Xxh64 {
  // Four accumulators as (high, low) pairs: v[0..1] is v1, and so on.
  private readonly v = new Uint32Array(8)
  private readonly stripe = new Uint8Array(32)
  private buffered = 0
  private total = 0

  constructor() {
    add(0, 0, P1H, P1L)
    add(rh, rl, P2H, P2L)
    this.v[0] = rh
    this.v[1] = rl
    this.v[2] = P2H
    this.v[3] = P2L
    this.v[4] = 0
    this.v[5] = 0
    // 0 - P1
    add(~P1H >>> 0, ~P1L >>> 0, 0, 1)
    this.v[6] = rh
    this.v[7] = rl
  }

  private consume(b: Uint8Array, i: number): void {
    const v = this.v
    for (let lane = 0; lane < 4; lane++, i += 8) {
      round(v[lane * 2]!, v[lane * 2 + 1]!, read32(b, i + 4), read32(b, i))
      v[lane * 2] = rh
      v[lane * 2 + 1] = rl
    }
  }

  update(bytes: Uint8Array): this {
    this.total += bytes.length
    let i = 0
    if (this.buffered > 0) {
      const take = Math.min(32 - this.buffered, bytes.length)
      this.stripe.set(bytes.subarray(0, take), this.buffered)
      this.buffered += take
      i = take
      if (this.buffered < 32) return this
      this.consume(this.stripe, 0)
      this.buffered = 0
    }
    for (; i + 32 <= bytes.length; i += 32) this.consume(bytes, i)
    if (i < bytes.length) {
      this.stripe.set(bytes.subarray(i), 0)
      this.buffered = bytes.length - i
    }
    return this
  }

  /** The low 32 bits of the digest, what a zstd frame stores. */
  digestLow32(): number {
    return this.digest()[1]
  }

  /** The digest as [high 32 bits, low 32 bits]. */
  digest(): [number, number] {
    const v = this.v
    let h: number
    let l: number
    if (this.total >= 32) {
      rotl(v[0]!, v[1]!, 1)
      let sh = rh, sl = rl
      rotl(v[2]!, v[3]!, 7)
      add(sh, sl, rh, rl)
      sh = rh
      sl = rl
      rotl(v[4]!, v[5]!, 12)
      add(sh, sl, rh, rl)
      sh = rh
      sl = rl
      rotl(v[6]!, v[7]!, 18)
      add(sh, sl, rh, rl)
      h = rh
      l = rl
      for (let lane = 0; lane < 4; lane++) {
        round(0, 0, v[lane * 2]!, v[lane * 2 + 1]!)
        h = (h ^ rh) >>> 0
        l = (l ^ rl) >>> 0
        mul(h, l, P1H, P1L)
        add(rh, rl, P4H, P4L)
        h = rh
        l = rl
      }
    } else {
      h = P5H
      l = P5L
    }
    // + total length (a part is far below 2^53 bytes)
    add(h, l, Math.floor(this.total / 0x100000000) >>> 0, this.total >>> 0)
    h = rh
    l = rl
    const b = this.stripe
    const n = this.buffered
    let i = 0
    for (; i + 8 <= n; i += 8) {
      round(0, 0, read32(b, i + 4), read32(b, i))
      h = (h ^ rh) >>> 0
      l = (l ^ rl) >>> 0
      rotl(h, l, 27)
      mul(rh, rl, P1H, P1L)
      add(rh, rl, P4H, P4L)
      h = rh
      l = rl
    }
    if (i + 4 <= n) {
      mul(0, read32(b, i), P1H, P1L)
      h = (h ^ rh) >>> 0
      l = (l ^ rl) >>> 0
      rotl(h, l, 23)
      mul(rh, rl, P2H, P2L)
      add(rh, rl, P3H, P3L)
      h = rh
      l = rl
      i += 4
    }
    for (; i < n; i++) {
      mul(0, b[i]!, P5H, P5L)
      h = (h ^ rh) >>> 0
      l = (l ^ rl) >>> 0
      rotl(h, l, 11)
      mul(rh, rl, P1H, P1L)
      h = rh
      l = rl
    }
    // avalanche: acc ^= acc >> 33; acc *= P2; acc ^= acc >> 29; acc *= P3; acc ^= acc >> 32
    l = (l ^ (h >>> 1)) >>> 0
    mul(h, l, P2H, P2L)
    h = rh
    l = (rl ^ ((rl >>> 29) | (rh << 3))) >>> 0
    h = (h ^ (h >>> 29)) >>> 0
    mul(h, l, P3H, P3L)
    return [rh, (rl ^ rh) >>> 0]
  }
}
