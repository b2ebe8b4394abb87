// The one seam between the sink engine and where objects live. Three drivers implement it: a
// directory (Node), any S3-compatible endpoint (aws4fetch, Node and Workers) and an R2 bucket
// binding (Workers). A put replaces an object whole or not at all, so a crash mid-put leaves the
// previous object (or none) and the re-run rewrites the same name.
export interface ObjectStore {
  /** Writes (or replaces) one object. Resolves only once the store has made it durable. */
  put(key: string, body: Uint8Array, contentType: string): Promise<void>
  /** The object's bytes, or null when there is none. */
  get(key: string): Promise<Uint8Array | null>
  /** Every key under a prefix, in lexical order. */
  list(prefix: string): Promise<string[]>
  /** For logs and the console: where the objects go, without credentials. */
  readonly describe: string
}
