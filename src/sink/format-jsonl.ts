// The JSONL format of the hive layout: one line per row, the five fields always in this order and
// spelling, plain or gzip (web streams, so Node and workerd compress alike; the sha256 of the
// manifest is over the stored bytes, which one zlib build always produces the same way).
import { gunzip, gzip, utf8 } from './codec.js'
import type { LakeFormat, LakeRow, ObjectEncoder } from './lake-row.js'

export function jsonlLine(row: LakeRow): string {
  const line: Record<string, unknown> = { partition: row.partition, offset: row.offset, transactionId: row.transactionId, ts: row.ts, payload: row.payload ?? null }
  if (row.decryptError !== undefined) line.decryptError = row.decryptError
  return `${JSON.stringify(line)}\n`
}

export function jsonlFormat(compression: 'gzip' | 'none'): LakeFormat {
  return {
    extension: compression === 'gzip' ? 'jsonl.gz' : 'jsonl',
    contentType: 'application/x-ndjson',
    compression,
    writer: `queen-edge jsonl${compression === 'gzip' ? '+gzip' : ''}`,
    encoder(): ObjectEncoder {
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
    },
    async decode(bytes) {
      const text = new TextDecoder().decode(compression === 'gzip' ? await gunzip(bytes) : bytes)
      return text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as LakeRow)
    },
  }
}
