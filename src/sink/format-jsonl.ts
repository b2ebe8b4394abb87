// The JSONL format of the hive layout: one line per row, the five fields always in this order and
// spelling, plain, gzip (web streams, so Node and workerd compress alike; the sha256 of the
// manifest is over the stored bytes, which one zlib build always produces the same way) or zstd
// (the sink's own encoder, src/zstd/: the same bytes on every runtime, and streamed, so a part
// holds its compressed blocks and one window of history, not its lines).
import { gunzip, gzip, utf8 } from './codec.js'
import type { LakeFormat, LakeRow, ObjectEncoder } from './lake-row.js'
import { ZstdWriter, zstdDecompress } from '../zstd/index.js'

export type JsonlCompression = 'gzip' | 'zstd' | 'none'

const EXTENSION: Record<JsonlCompression, string> = { gzip: 'jsonl.gz', zstd: 'jsonl.zst', none: 'jsonl' }

export function jsonlLine(row: LakeRow): string {
  const line: Record<string, unknown> = { partition: row.partition, offset: row.offset, transactionId: row.transactionId, ts: row.ts, payload: row.payload ?? null }
  if (row.decryptError !== undefined) line.decryptError = row.decryptError
  return `${JSON.stringify(line)}\n`
}

/** Lines kept as text and compressed at the end (gzip, none). */
function bufferedEncoder(compression: 'gzip' | 'none'): ObjectEncoder {
  const lines: string[] = []
  let size = 0
  return {
    add(row) {
      const line = jsonlLine(row)
      lines.push(line)
      // UTF-16 length as a cheap bound on the part size; exact bytes are counted by the store.
      size += line.length
    },
    get rows() {
      return lines.length
    },
    get size() {
      return size
    },
    async finish() {
      const bytes = utf8(lines.join(''))
      return compression === 'gzip' ? gzip(bytes) : bytes
    },
  }
}

/** Lines compressed as they come: the frame is cut into blocks at fixed content positions, so the bytes do not depend on the rows' batching. */
function zstdEncoder(): ObjectEncoder {
  const writer = new ZstdWriter()
  let rows = 0
  let size = 0
  return {
    add(row) {
      const line = jsonlLine(row)
      writer.write(utf8(line))
      rows++
      size += line.length
    },
    get rows() {
      return rows
    },
    get size() {
      return size
    },
    async finish() {
      return writer.finish()
    },
  }
}

async function uncompressed(bytes: Uint8Array, compression: JsonlCompression): Promise<Uint8Array> {
  if (compression === 'gzip') return gunzip(bytes)
  if (compression === 'zstd') return zstdDecompress(bytes)
  return bytes
}

export function jsonlFormat(compression: JsonlCompression): LakeFormat {
  return {
    extension: EXTENSION[compression],
    contentType: 'application/x-ndjson',
    compression,
    writer: `queen-edge jsonl${compression === 'none' ? '' : `+${compression}`}`,
    encoder: () => (compression === 'zstd' ? zstdEncoder() : bufferedEncoder(compression)),
    async decode(bytes) {
      const text = new TextDecoder().decode(await uncompressed(bytes, compression))
      return text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as LakeRow)
    },
  }
}
