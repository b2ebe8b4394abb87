// The R2 driver (Workers): an R2 bucket binding. R2's put is atomic per object and strongly
// consistent, so a later get or list sees it. Only the part of the binding's interface the sink
// uses is declared here, so src/sink does not depend on the Workers type package.
import type { ObjectStore } from './store.js'

export interface R2BucketLike {
  put(key: string, value: ArrayBuffer | Uint8Array, options?: { httpMetadata?: { contentType?: string } }): Promise<unknown>
  get(key: string): Promise<{ arrayBuffer(): Promise<ArrayBuffer> } | null>
  list(options: { prefix?: string; cursor?: string; limit?: number }): Promise<{ objects: { key: string }[]; truncated: boolean; cursor?: string }>
}

export function r2Store(bucket: R2BucketLike, name = 'R2'): ObjectStore {
  return {
    describe: `r2:${name}`,
    async put(key, body, contentType) {
      await bucket.put(key, body, { httpMetadata: { contentType } })
    },
    async get(key) {
      const object = await bucket.get(key)
      return object ? new Uint8Array(await object.arrayBuffer()) : null
    },
    async list(prefix) {
      const keys: string[] = []
      let cursor: string | undefined
      for (;;) {
        const page = await bucket.list({ prefix, cursor, limit: 1000 })
        keys.push(...page.objects.map((o) => o.key))
        if (!page.truncated) break
        cursor = page.cursor
      }
      return keys.sort()
    },
  }
}
