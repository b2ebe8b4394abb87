// The key/value store's ceilings, Queen 1.6's defaults (docs/kv.md). A transaction's `kv` rider runs
// under smaller ones, because the bundle holds its locks while the rider runs.
import type { KvLimits } from '../db/procedures.js'

export const KV_LIMITS: KvLimits = {
  maxOps: 256,
  maxKeys: 1024,
  maxValueBytes: 65_536,
  maxKeyBytes: 512,
  maxReadBytes: 4 * 1024 * 1024,
}

export const KV_RIDER_LIMITS: KvLimits = { ...KV_LIMITS, maxOps: 64, maxKeys: 256 }
