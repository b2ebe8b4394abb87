// One row of the lake: the same five fields in both formats (Queen's sink writes these five), so a
// user who moves from Queen, or who points a query engine at the bucket, finds what they expect.
// The queue and tenant are not rows' fields: they are the queue=/tenant= levels of the key, which
// every reader with Hive partition discovery hands back as columns (a column and a partition key
// of one name break Athena's and PyArrow's schema merge). (partition, offset, ts) identifies a row
// even across a partition deleted and created again; transactionId may repeat in the log itself.

export interface LakeRow {
  partition: string
  offset: number
  transactionId: string
  /** createdAt as fetch answers it: UTC with six fractional digits. */
  ts: string
  /** The decrypted payload; null when empty or when no key could open it (then decryptError says why). */
  payload: unknown
  decryptError?: string
}

/** An object being built from rows in order; its bytes depend on the rows alone. */
export interface ObjectEncoder {
  add(row: LakeRow): void
  /** Rows added so far. */
  readonly rows: number
  /** Bytes of the encoded rows before compression, which bounds a part. */
  readonly size: number
  /** The object's bytes; the encoder is spent afterwards. */
  finish(): Promise<Uint8Array>
}

export interface LakeFormat {
  extension: string
  contentType: string
  /** The manifest's `compression` and `writer` (which library and settings made the bytes). */
  compression: string
  writer: string
  encoder(meta: { queue: string; tenant: string }): ObjectEncoder
  /** Reads an object back, for verify. */
  decode(bytes: Uint8Array): Promise<LakeRow[]>
}
