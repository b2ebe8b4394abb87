// A zstd decoder (RFC 8878), for what verify reads back and for payloads sent compressed: frames
// one after another, skippable frames ignored, every block type, the content checksum checked.
// No dictionaries. Written from the RFC like the encoder, and tested against the reference zstd's
// output, so it is not only the encoder's mirror.
import { decodeLiterals, type LiteralsState } from './literals-decode.js'
import { decodeSequences, type SequenceTables } from './sequences-decode.js'
import { Xxh64 } from './xxhash64.js'

const MAGIC = 0xfd2fb528
/** The largest content this decoder builds by default: a frame that claims more is refused, not allocated. */
const MAX_OUTPUT = 1024 * 1024 * 1024

/** Content past the caller's limit: refused before it is allocated, so a small frame cannot expand into memory. */
export class ZstdTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`zstd: content larger than ${limit} bytes`)
  }
}

class Output {
  bytes: Uint8Array
  length = 0
  constructor(
    capacity: number,
    readonly limit: number,
  ) {
    this.bytes = new Uint8Array(Math.max(64, Math.min(capacity, limit)))
  }
  reserve(n: number): void {
    if (this.length + n <= this.bytes.length) return
    if (this.length + n > this.limit) throw new ZstdTooLarge(this.limit)
    const next = new Uint8Array(Math.min(this.limit, Math.max(this.bytes.length * 2, this.length + n)))
    next.set(this.bytes.subarray(0, this.length))
    this.bytes = next
  }
  append(chunk: Uint8Array): void {
    this.reserve(chunk.length)
    this.bytes.set(chunk, this.length)
    this.length += chunk.length
  }
}

const u32 = (b: Uint8Array, i: number) => (b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24)) >>> 0

/** Decodes every frame of `input`; `maxBytes` bounds the content (ZstdTooLarge past it). */
export function zstdDecompress(input: Uint8Array, maxBytes = MAX_OUTPUT): Uint8Array {
  const out = new Output(input.length * 4, maxBytes)
  let at = 0
  while (at < input.length) {
    if (at + 4 > input.length) throw new Error('zstd: truncated frame')
    const magic = u32(input, at)
    if ((magic & 0xfffffff0) >>> 0 === 0x184d2a50) {
      at += 8 + u32(input, at + 4)
      continue
    }
    if (magic !== MAGIC) throw new Error('zstd: not a zstd frame')
    at = readFrame(input, at + 4, out)
  }
  return out.bytes.slice(0, out.length)
}

function readFrame(input: Uint8Array, at: number, out: Output): number {
  const descriptor = input[at++]!
  const sizeFlag = descriptor >>> 6
  const single = (descriptor & 0x20) !== 0
  const checksum = (descriptor & 0x04) !== 0
  const dictionaryBytes = [0, 1, 2, 4][descriptor & 3]!
  if (descriptor & 0x08) throw new Error('zstd: reserved bit set in frame header')
  if (!single) at++ // window descriptor: the whole content is kept, so the window needs no size
  if (dictionaryBytes > 0) {
    let id = 0
    for (let i = dictionaryBytes - 1; i >= 0; i--) id = id * 256 + input[at + i]!
    if (id !== 0) throw new Error('zstd: frames that need a dictionary are not supported')
    at += dictionaryBytes
  }
  const sizeBytes = [single ? 1 : 0, 2, 4, 8][sizeFlag]!
  let contentSize = -1
  if (sizeBytes > 0) {
    contentSize = 0
    for (let i = sizeBytes - 1; i >= 0; i--) contentSize = contentSize * 256 + input[at + i]!
    if (sizeBytes === 2) contentSize += 256
    at += sizeBytes
    if (contentSize > out.limit) throw new ZstdTooLarge(out.limit)
    out.reserve(contentSize)
  }
  const frameStart = out.length
  const reps = Uint32Array.of(1, 4, 8)
  const literalsState: LiteralsState = {}
  const tables: SequenceTables = {}
  for (let last = false; !last; ) {
    if (at + 3 > input.length) throw new Error('zstd: truncated block header')
    const header = input[at]! | (input[at + 1]! << 8) | (input[at + 2]! << 16)
    at += 3
    last = (header & 1) === 1
    const type = (header >>> 1) & 3
    const size = header >>> 3
    if (type === 0) {
      if (at + size > input.length) throw new Error('zstd: truncated raw block')
      out.append(input.subarray(at, at + size))
      at += size
    } else if (type === 1) {
      out.reserve(size)
      out.bytes.fill(input[at]!, out.length, out.length + size)
      out.length += size
      at += 1
    } else if (type === 2) {
      if (at + size > input.length) throw new Error('zstd: truncated compressed block')
      readBlock(input, at, at + size, out, frameStart, reps, literalsState, tables)
      at += size
    } else throw new Error('zstd: reserved block type')
  }
  if (contentSize >= 0 && out.length - frameStart !== contentSize) throw new Error('zstd: content size does not match the frame header')
  if (checksum) {
    const expected = u32(input, at)
    at += 4
    if (new Xxh64().update(out.bytes.subarray(frameStart, out.length)).digestLow32() !== expected) throw new Error('zstd: checksum mismatch')
  }
  return at
}

function readBlock(input: Uint8Array, start: number, end: number, out: Output, frameStart: number, reps: Uint32Array, literalsState: LiteralsState, tables: SequenceTables): void {
  const { literals, size } = decodeLiterals(input, start, literalsState)
  const seq = decodeSequences(input, start + size, end, tables)
  let lit = 0
  for (let i = 0; i < seq.count; i++) {
    const ll = seq.literalLength[i]!
    const ml = seq.matchLength[i]!
    const value = seq.offsetValue[i]!
    let offset: number
    if (value > 3) {
      offset = value - 3
      reps[2] = reps[1]!
      reps[1] = reps[0]!
      reps[0] = offset
    } else {
      const slot = value - 1 + (ll === 0 ? 1 : 0)
      offset = slot === 3 ? reps[0]! - 1 : reps[slot]!
      if (slot === 1) {
        reps[1] = reps[0]!
        reps[0] = offset
      } else if (slot >= 2) {
        reps[2] = reps[1]!
        reps[1] = reps[0]!
        reps[0] = offset
      }
    }
    if (lit + ll > literals.length) throw new Error('zstd: sequence takes more literals than the block has')
    out.append(literals.subarray(lit, lit + ll))
    lit += ll
    if (offset === 0 || offset > out.length - frameStart) throw new Error('zstd: match offset before the frame start')
    out.reserve(ml)
    const bytes = out.bytes
    let from = out.length - offset
    let to = out.length
    for (const stop = to + ml; to < stop; ) bytes[to++] = bytes[from++]!
    out.length = to
  }
  out.append(literals.subarray(lit))
}
