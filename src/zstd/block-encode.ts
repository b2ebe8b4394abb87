// One block of a frame (RFC 8878 3.1.1.2): RLE when every byte is the same, compressed when that is
// smaller, raw otherwise. The frame's repeat offsets only move when the compressed form is kept.
import { encodeLiterals } from './literals-encode.js'
import type { MatchFinder } from './match-finder.js'
import { encodeSequences } from './sequences-encode.js'

function blockHeader(last: boolean, type: 0 | 1 | 2, size: number): Uint8Array {
  const v = (last ? 1 : 0) | (type << 1) | (size << 3)
  return Uint8Array.of(v & 0xff, (v >>> 8) & 0xff, v >>> 16)
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

export function encodeBlock(buf: Uint8Array, start: number, end: number, finder: MatchFinder, reps: Uint32Array, last: boolean): Uint8Array {
  const size = end - start
  let same = size > 1
  for (let i = start + 1; i < end && same; i++) same = buf[i] === buf[start]
  if (same) return concat([blockHeader(last, 1, size), buf.subarray(start, start + 1)])
  const kept = reps.slice()
  const parsed = finder.parse(buf, start, end, reps)
  const literals = encodeLiterals(parsed.literals)
  const sequences = encodeSequences(parsed.sequences)
  if (literals.length + sequences.length < size) return concat([blockHeader(last, 2, literals.length + sequences.length), literals, sequences])
  reps.set(kept)
  return concat([blockHeader(last, 0, size), buf.subarray(start, end)])
}
