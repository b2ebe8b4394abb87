// The Parquet format of the hive layout, written by hyparquet-writer (pure JavaScript, so the same
// code runs on Node and in workerd; docs/sink.md says why this writer). Five fixed columns:
//   partition       required string, dictionary when it pays, min/max per row group (prunes by entity)
//   offset          required int64, DELTA_BINARY_PACKED (dense and rising within a partition)
//   transaction_id  required string, plain
//   ts              required int64 TIMESTAMP(MICROS, UTC), DELTA_BINARY_PACKED, min/max (prunes by time)
//   payload         optional string: the payload as JSON text (json_extract reads it); null when empty
// Everything that can move a byte is pinned here rather than taken from the library's defaults:
// created_by, the footer's key/value pairs (constant for the object), the page codec (Snappy, or
// zstd by the sink's own encoder, which hyparquet-writer takes as a compressor function), the row group
// and page sizes, statistics per column. The library version is pinned in package.json and named in
// each manifest's `writer`, because an upgrade may move bytes. Rows are buffered only up to one row
// group; the encoded row groups accumulate in the object's buffer up to the part's size bound.
import { parquetReadObjects } from 'hyparquet'
import { ByteWriter, ParquetWriter } from 'hyparquet-writer'
import type { LakeFormat, LakeRow, ObjectEncoder } from './lake-row.js'
import { zstdCompress, zstdDecompress } from '../zstd/index.js'

const ROW_GROUP_ROWS = 100_000
const PAGE_BYTES = 1024 * 1024
const STATISTICS_TRUNCATE = 64
const CREATED_BY = 'queen-edge'
const WRITER = { snappy: 'queen-edge parquet+snappy (hyparquet-writer 0.17.0)', zstd: 'queen-edge parquet+zstd (hyparquet-writer 0.17.0)' }
/** Page codecs beyond the writer's built-in Snappy, for writing and for reading back. */
const COMPRESSORS = { ZSTD: zstdCompress }
const DECOMPRESSORS = { ZSTD: (input: Uint8Array) => zstdDecompress(input) }

export type ParquetCodec = 'snappy' | 'zstd'

const SCHEMA = [
  { name: 'queen_record', num_children: 5 },
  { name: 'partition', type: 'BYTE_ARRAY', repetition_type: 'REQUIRED', converted_type: 'UTF8', logical_type: { type: 'STRING' } },
  { name: 'offset', type: 'INT64', repetition_type: 'REQUIRED' },
  { name: 'transaction_id', type: 'BYTE_ARRAY', repetition_type: 'REQUIRED', converted_type: 'UTF8', logical_type: { type: 'STRING' } },
  { name: 'ts', type: 'INT64', repetition_type: 'REQUIRED', converted_type: 'TIMESTAMP_MICROS', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' } },
  { name: 'payload', type: 'BYTE_ARRAY', repetition_type: 'OPTIONAL', converted_type: 'UTF8', logical_type: { type: 'STRING' } },
] as const

/** Microseconds since the epoch of fetch's createdAt (six fractional digits, UTC). */
function micros(iso: string): bigint {
  const dot = iso.indexOf('.')
  const whole = BigInt(Date.parse(`${dot < 0 ? iso.slice(0, -1) : iso.slice(0, dot)}Z`)) * 1000n
  return dot < 0 ? whole : whole + BigInt(iso.slice(dot + 1, -1).padEnd(6, '0').slice(0, 6))
}

/** fetch's createdAt spelling back from microseconds. */
function isoOfMicros(value: bigint): string {
  const ms = value / 1000n
  return `${new Date(Number(ms)).toISOString().slice(0, 19)}.${String(value % 1_000_000n).padStart(6, '0')}Z`
}

export function parquetFormat(codec: ParquetCodec = 'snappy'): LakeFormat {
  return {
    extension: 'parquet',
    contentType: 'application/vnd.apache.parquet',
    compression: codec,
    writer: WRITER[codec],
    encoder(meta): ObjectEncoder {
      const writer = new ByteWriter()
      const file = new ParquetWriter({
        writer,
        schema: SCHEMA as never,
        codec: codec === 'zstd' ? 'ZSTD' : 'SNAPPY',
        compressors: COMPRESSORS,
        statistics: true,
        statisticsTruncateLength: STATISTICS_TRUNCATE,
        createdBy: CREATED_BY,
        kvMetadata: [
          { key: 'queen.envelope', value: '1' },
          { key: 'queen.queue', value: meta.queue },
          { key: 'queen.tenant', value: meta.tenant },
        ],
      })
      let partition: string[] = []
      let offset: bigint[] = []
      let transactionId: string[] = []
      let ts: bigint[] = []
      let payload: (string | null)[] = []
      let rows = 0
      let size = 0
      const flushGroup = () => {
        if (partition.length === 0) return
        file.write({
          columnData: [
            { name: 'partition', data: partition, offsetIndex: false },
            { name: 'offset', data: BigInt64Array.from(offset), encoding: 'DELTA_BINARY_PACKED', offsetIndex: false },
            { name: 'transaction_id', data: transactionId, encoding: 'PLAIN', statistics: false, offsetIndex: false },
            { name: 'ts', data: BigInt64Array.from(ts), encoding: 'DELTA_BINARY_PACKED', offsetIndex: false },
            { name: 'payload', data: payload, encoding: 'PLAIN', statistics: false, offsetIndex: false },
          ],
          rowGroupSize: ROW_GROUP_ROWS,
          pageSize: PAGE_BYTES,
        })
        partition = []
        offset = []
        transactionId = []
        ts = []
        payload = []
      }
      return {
        add(row: LakeRow) {
          const text = row.payload === null || row.payload === undefined ? null : JSON.stringify(row.payload)
          partition.push(row.partition)
          offset.push(BigInt(row.offset))
          transactionId.push(row.transactionId)
          ts.push(micros(row.ts))
          payload.push(text)
          rows++
          size += row.partition.length + row.transactionId.length + (text?.length ?? 0) + 16
          if (partition.length >= ROW_GROUP_ROWS) flushGroup()
        },
        get rows() {
          return rows
        },
        get size() {
          return size
        },
        async finish() {
          flushGroup()
          await file.finish()
          return writer.getBytes().slice()
        },
      }
    },
    async decode(bytes) {
      const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
      const records = await parquetReadObjects({ file: buffer, compressors: DECOMPRESSORS, parsers: { timestampFromMicroseconds: (v: bigint | number) => BigInt(v) as never } })
      return records.map((r) => ({
        partition: String(r.partition),
        offset: Number(r.offset),
        transactionId: String(r.transaction_id),
        ts: isoOfMicros(r.ts as bigint),
        payload: r.payload === null || r.payload === undefined ? null : JSON.parse(String(r.payload)),
      }))
    },
  }
}
