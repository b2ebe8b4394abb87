// The manifest of one committed window: written after the window's objects and before the kv
// pointer moves to its windowEnd, so every pointer value names a manifest that exists. It lists
// the window's objects (first/last offset, count, bytes, sha256) and carries the per-partition
// next offsets, which is all the state a restarted sink needs besides the pointer itself.

export interface ArchivedObject {
  key: string
  partition: string
  firstOffset: number
  lastOffset: number
  count: number
  /** Size of the stored (gzip) object. */
  bytes: number
  /** Size of the NDJSON inside it. */
  ndjsonBytes: number
  /** sha256 of the NDJSON inside it, hex. */
  sha256: string
}

/** Offsets a reader can never have: retention (past the hold's cap) or an admin delete removed them first. */
export interface Gap {
  partition: string
  fromOffset: number
  toOffset: number
}

export interface Manifest {
  version: 1
  sink: string
  queue: string
  /** Start of the window whose frames the objects hold; null when the window held no frame. */
  windowStart: string | null
  windowEnd: string
  previousWindowEnd: string | null
  windowSeconds: number
  objects: ArchivedObject[]
  gaps: Gap[]
  /** Per partition: the first offset not archived yet (every lower offset is archived or a gap). */
  offsets: Record<string, number>
}

export function parseManifest(bytes: Uint8Array, key: string): Manifest {
  const manifest = JSON.parse(new TextDecoder().decode(bytes)) as Manifest
  if (manifest?.version !== 1 || typeof manifest.windowEnd !== 'string' || typeof manifest.offsets !== 'object') {
    throw new Error(`${key} is not a sink manifest`)
  }
  return manifest
}
