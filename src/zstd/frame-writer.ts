// A zstd frame written as its content arrives (RFC 8878 3.1.1): bytes are cut into 128 KiB blocks
// at fixed content positions, so the output depends on the content alone, never on how it was
// handed over. Only the window (history the matches may reach) and the compressed blocks are held;
// the header, which carries the content size, is put in front when the frame is finished.
import { encodeBlock } from './block-encode.js'
import { MatchFinder } from './match-finder.js'
import { Xxh64 } from './xxhash64.js'

const MAGIC = 0xfd2fb528
export const BLOCK_MAX = 128 * 1024
const WINDOW_LOG_MAX = 20
const WINDOW_LOG_MIN = 17

export class ZstdWriter {
  private readonly window: number
  private readonly buf: Uint8Array
  private readonly finder: MatchFinder
  private readonly hash = new Xxh64()
  // The frame's repeat offsets, as RFC 8878 starts them.
  private readonly reps = Uint32Array.of(1, 4, 8)
  private readonly blocks: Uint8Array[] = []
  private length = 0
  private encoded = 0
  private total = 0
  private finished = false

  /** sizeHint: the content's size when known, so a small input does not pay for a large window. */
  constructor(sizeHint?: number) {
    let log = WINDOW_LOG_MIN
    while (log < WINDOW_LOG_MAX && (sizeHint === undefined || 1 << log < sizeHint)) log++
    this.window = 1 << log
    this.buf = new Uint8Array(this.window * 2)
    this.finder = new MatchFinder(this.window, BLOCK_MAX)
  }

  /** Bytes of compressed blocks so far (the frame adds at most 22 bytes of header and checksum). */
  get compressedSize(): number {
    return this.blocks.reduce((n, b) => n + b.length, 0)
  }

  write(chunk: Uint8Array): void {
    if (this.finished) throw new Error('zstd: frame already finished')
    let i = 0
    while (i < chunk.length) {
      // A full block is encoded only once more content follows, so the last one can be marked last.
      if (this.length - this.encoded === BLOCK_MAX) this.encodePending(false)
      if (this.length === this.buf.length) this.slide()
      const take = Math.min(chunk.length - i, BLOCK_MAX - (this.length - this.encoded))
      this.buf.set(chunk.subarray(i, i + take), this.length)
      this.length += take
      i += take
    }
    this.total += chunk.length
  }

  /** The whole frame: header, blocks, checksum. The writer is spent afterwards. */
  finish(): Uint8Array {
    if (this.finished) throw new Error('zstd: frame already finished')
    this.encodePending(true)
    this.finished = true
    const header = this.header()
    const size = header.length + this.compressedSize + 4
    const out = new Uint8Array(size)
    out.set(header)
    let at = header.length
    for (const block of this.blocks) {
      out.set(block, at)
      at += block.length
    }
    const check = this.hash.digestLow32()
    out[at] = check & 0xff
    out[at + 1] = (check >>> 8) & 0xff
    out[at + 2] = (check >>> 16) & 0xff
    out[at + 3] = check >>> 24
    this.blocks.length = 0
    return out
  }

  private encodePending(last: boolean): void {
    const start = this.encoded
    this.hash.update(this.buf.subarray(start, this.length))
    this.blocks.push(encodeBlock(this.buf, start, this.length, this.finder, this.reps, last))
    this.encoded = this.length
  }

  /** Drops the oldest window of bytes; the chain's slots (position mod window) stay where they are. */
  private slide(): void {
    this.buf.copyWithin(0, this.window, this.length)
    this.length -= this.window
    this.encoded -= this.window
    this.finder.rebase(this.window)
  }

  private header(): Uint8Array {
    const total = this.total
    const bytes: number[] = [MAGIC & 0xff, (MAGIC >>> 8) & 0xff, (MAGIC >>> 16) & 0xff, MAGIC >>> 24]
    // Content within one window: a single segment, whose window is the content itself.
    const single = total <= this.window
    const sizeFlag = single && total < 256 ? 0 : total >= 256 && total < 65536 + 256 ? 1 : total <= 0xffffffff ? 2 : 3
    bytes.push((sizeFlag << 6) | (single ? 1 << 5 : 0) | (1 << 2))
    if (!single) bytes.push((Math.log2(this.window) - 10) << 3)
    if (sizeFlag === 0) bytes.push(total)
    else if (sizeFlag === 1) bytes.push((total - 256) & 0xff, (total - 256) >>> 8)
    else if (sizeFlag === 2) bytes.push(total & 0xff, (total >>> 8) & 0xff, (total >>> 16) & 0xff, total >>> 24)
    else {
      const high = Math.floor(total / 0x100000000)
      bytes.push(total & 0xff, (total >>> 8) & 0xff, (total >>> 16) & 0xff, (total >>> 24) & 0xff)
      bytes.push(high & 0xff, (high >>> 8) & 0xff, (high >>> 16) & 0xff, high >>> 24)
    }
    return Uint8Array.from(bytes)
  }
}

/** The zstd frame of `bytes`, in one call (Parquet pages). */
export function zstdCompress(bytes: Uint8Array): Uint8Array {
  const writer = new ZstdWriter(bytes.length)
  writer.write(bytes)
  return writer.finish()
}
