// The sidecars of a hive-layout window, under _queen/ where a reader's glob over queue=*/dt=*/...
// never meets them. The manifest (written after the window's objects, before the kv pointer moves
// to its windowEnd, so every pointer value names one) lists the objects with their row counts,
// sizes and sha256 of the stored bytes, the gaps, the format and the writer that made the bytes,
// and the previous window's end (the committed windows form a chain back to the first). The
// checkpoint, written first, holds the next offset per partition: with the pointer, all a
// restarted sink needs. Both are rewritten whole by a retried window.
import type { Gap } from './manifest.js'

export interface LakeObject {
  key: string
  /** Rows in the object. */
  count: number
  /** Stored bytes. */
  bytes: number
  /** sha256 of the stored bytes, hex. */
  sha256: string
  /** Per-partition windows only: the partition and its offset range in this object. */
  partition?: string
  firstOffset?: number
  lastOffset?: number
}

export interface LakeManifest {
  version: 2
  sink: string
  tenant: string
  queue: string
  layout: 'hive'
  windows: 'queue' | 'partition'
  align: string
  format: string
  compression: string
  writer: string
  /** Start of the window whose rows the objects hold; null when the window held no row. */
  windowStart: string | null
  windowEnd: string
  previousWindowEnd: string | null
  windowSeconds: number
  objects: LakeObject[]
  records: number
  bytes: number
  /** Partitions with at least one row in the window. */
  partitions: number
  gaps: Gap[]
  checkpoint: string
}

export interface LakeCheckpoint {
  windowEnd: string
  /** Per partition: the first offset not archived yet (every lower offset is archived or a gap). */
  offsets: Record<string, number>
}

export function parseLakeManifest(bytes: Uint8Array, key: string): LakeManifest {
  const manifest = JSON.parse(new TextDecoder().decode(bytes)) as LakeManifest
  if (manifest?.version !== 2 || typeof manifest.windowEnd !== 'string' || !Array.isArray(manifest.objects)) throw new Error(`${key} is not a sink manifest`)
  return manifest
}

export function parseCheckpoint(bytes: Uint8Array, key: string): LakeCheckpoint {
  const checkpoint = JSON.parse(new TextDecoder().decode(bytes)) as LakeCheckpoint
  if (typeof checkpoint?.offsets !== 'object' || checkpoint.offsets === null) throw new Error(`${key} is not a sink checkpoint`)
  return checkpoint
}
