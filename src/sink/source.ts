// The broker's side of the sink protocol, called through the db layer's typed registry: the same
// procedures the routes partitions/changed and fetch call (docs/sink-protocol.md), plus the sink's
// pointer (namespace queen.sink of the key/value store), its lease and its fenced compare-and-set
// commit, which have no route. The sink is maintenance code like the
// cron lanes (and on Workers it runs in scheduled() next to them), so it takes the layer lanes
// take: db -> SQL. Payloads are decrypted here with the broker's own keyring, exactly as the
// fetch route does, so an archive of an encrypted queue holds what a consumer would read.
import type { Config } from '../config.js'
import type { Database } from '../db/database.js'
import { reveal } from '../reveal.js'

export interface ChangedPartition {
  name: string
  lastOffset: number
  logStart: number
}

export interface FetchedFrame {
  offset: number
  transactionId: string
  createdAt: string
  data: unknown
  decryptError?: string
}

export type FetchAnswer =
  | { partition: string; fromOffset: number; nextOffset: number; lastOffset: number; logStart: number; frames: FetchedFrame[] }
  | { partition: string; error: string }

export interface CommitAnswer {
  committed: boolean
  reason: 'lease_lost' | 'version' | 'behind' | null
  windowEnd: string | null
  /** The pointer's version after the call (0: no pointer). */
  version: number
}

/** The committed pointer and the version of its row, which the next commit must still find. */
export interface Pointer {
  windowEnd: string | null
  version: number
}

export interface SinkSource {
  /** One page of partitions/changed for the queue; `since` absent enumerates. */
  changed(queue: string, since: string | undefined, after: string | undefined): Promise<{ safeTime: string; partitions: ChangedPartition[]; next: string | null; error?: string }>
  fetch(queue: string, entries: { partition: string; fromOffset: number; limit: number; maxBytes: number }[]): Promise<FetchAnswer[]>
  /** The pointer with its version; version 0 when there is none yet. */
  pointer(sink: string, queue: string): Promise<Pointer>
  /** The pointer's windowEnd alone. */
  readPointer(sink: string, queue: string): Promise<string | null>
  claim(sink: string, queue: string, token: string, leaseSeconds: number): Promise<boolean>
  /** Moves the pointer to windowEnd if the lease is held and the row is still at expectVersion. */
  commit(sink: string, queue: string, token: string, leaseSeconds: number, windowEnd: string, summary: Record<string, unknown>, expectVersion: number): Promise<CommitAnswer>
}

/** The namespace of the key/value store the sink's pointers live in; clients may read it, never write it. */
export const POINTER_NAMESPACE = 'queen.sink'
/** The pointer's key in that namespace; retention's sink hold reads the same key. */
export const pointerKey = (sink: string, queue: string) => `s3:${sink}:${queue}:committed`

export function databaseSource(db: Database, config: Config, tenant: string): SinkSource {
  const pointer = async (sink: string, queue: string): Promise<Pointer> =>
    (await db.call('sink_pointer_v1', { tenant, sink, queue })) ?? { windowEnd: null, version: 0 }
  return {
    async changed(queue, since, after) {
      const answer = await db.call('log_partitions_changed_v1', { tenant, entries: [{ queue, since, after, limit: 1000 }] })
      const entry = answer.entries[0]!
      if ('error' in entry) return { safeTime: answer.safeTime, partitions: [], next: null, error: String(entry.error) }
      return { safeTime: answer.safeTime, partitions: entry.partitions, next: entry.next }
    },
    async fetch(queue, entries) {
      const answer = await db.call('log_fetch_v1', { tenant, entries: entries.map((e) => ({ queue, ...e })) })
      return Promise.all(
        answer.entries.map(async (entry): Promise<FetchAnswer> => {
          if ('error' in entry) return { partition: String(entry.partition), error: String(entry.error) }
          const frames = await reveal(config, entry.frames, () => ({ tenant, queue: entry.queue, partition: entry.partition }))
          return { ...entry, frames: frames.map((f) => ({ offset: f.offset, transactionId: f.transactionId, createdAt: f.createdAt, data: f.data, decryptError: f.decryptError })) }
        }),
      )
    },
    pointer,
    readPointer: async (sink, queue) => (await pointer(sink, queue)).windowEnd,
    claim: (sink, queue, token, leaseSeconds) => db.call('sink_lease_claim_v1', { tenant, sink, queue, token, ttl: `${leaseSeconds} seconds` }),
    commit: (sink, queue, token, leaseSeconds, windowEnd, summary, expectVersion) =>
      db.call('sink_commit_v1', { tenant, sink, queue, token, ttl: `${leaseSeconds} seconds`, windowEnd, summary, expectVersion }),
  }
}
