// The broker's copy of each tenant's pre-rendered `?stats=cached` listing (docs/resources.md).
// log_queue_stats_cached_v1 sends the listing's text only when the version the broker names is not
// the current one, so a poll of 10 000 queues moves ~100 bytes from PostgreSQL instead of 2.4 MiB.
// Versions are random UUIDs minted by whichever database rendered the listing, so a tenant moved
// to another database (docs/placement.md) can never be answered from the old database's text.
// One cache per app (per process on Node, per isolate on Workers), handed to the routes on the
// request context; least recently used first out past the byte budget.
// Where the runtime hands in a compressor, a client that accepts gzip gets the listing compressed
// once per version (src/http/gzip-splice.ts): ~300 KiB instead of 2.4 MiB on the wire.
import { acceptsGzip, gzipHead, gzipWithTail, type Deflater, type GzipHead } from '../http/gzip-splice.js'

/** The most listing text one process keeps: a few tenants of 10 000 queues (2.4 MiB each). */
const BUDGET_BYTES = 16 * 1024 * 1024
/** Below this an answer goes out plain: compressing it would save less than a few packets. */
const GZIP_MIN_BYTES = 8 * 1024

export interface HeldListing {
  version: string
  /** The answer's bytes up to its statsAge: `{"queues":[…],"statsAge":` in UTF-8. */
  head: Uint8Array
  /** The head compressed, made on the first gzip answer of this version. */
  gzip?: Promise<GzipHead>
}

/** One call's answer: the listing it serves and the bytes after the head (`<statsAge>}`). */
export interface ListingAnswer {
  listing: HeldListing
  tail: Uint8Array
}

export interface QueueListingCache {
  /** The listing this cache holds for `tenant` (its version goes to the procedure as p_known). */
  held(tenant: string): HeldListing | undefined
  /**
   * The answer to the procedure's "<version>\t<statsAge>\t<queues>". An empty <queues> means
   * "unchanged": it only comes back for the version `held` named, whose bytes this call still has
   * even if the budget has dropped them from the map meanwhile. A text that came back is kept,
   * encoded once: bytes, not a string, because @hono/node-server sends a 2.4 MiB string ~35 %
   * slower than the same bytes.
   */
  answer(tenant: string, result: string, held: HeldListing | undefined): ListingAnswer
}

const utf8 = new TextEncoder()

export function createQueueListingCache(): QueueListingCache {
  const entries = new Map<string, HeldListing>()
  let heldBytes = 0

  const remember = (tenant: string, listing: HeldListing): void => {
    const previous = entries.get(tenant)
    if (previous) {
      entries.delete(tenant)
      heldBytes -= previous.head.byteLength
    }
    if (listing.head.byteLength > BUDGET_BYTES) return
    entries.set(tenant, listing)
    heldBytes += listing.head.byteLength
    for (const [oldest, kept] of entries) {
      if (heldBytes <= BUDGET_BYTES) break
      entries.delete(oldest)
      heldBytes -= kept.head.byteLength
    }
  }

  return {
    held(tenant) {
      const held = entries.get(tenant)
      if (held) {
        entries.delete(tenant) // most recently used last
        entries.set(tenant, held)
      }
      return held
    },
    answer(tenant, result, held) {
      const firstTab = result.indexOf('\t')
      const secondTab = result.indexOf('\t', firstTab + 1)
      const version = result.slice(0, firstTab)
      const queues = result.slice(secondTab + 1)
      let listing = held
      if (!(listing && queues === '' && listing.version === version)) {
        listing = { version, head: utf8.encode(`{"queues":${queues},"statsAge":`) }
        remember(tenant, listing)
      }
      return { listing, tail: utf8.encode(`${result.slice(firstTab + 1, secondTab)}}`) }
    },
  }
}

/**
 * The answer's body as the chunks to send in order (the held bytes themselves, never copied: a
 * 2.4 MiB copy per call was most of the listing's p99), and whether it is gzip: gzip when a
 * deflater is at hand, the client accepts it and the listing is big enough to be worth it.
 */
export async function listingBody(answer: ListingAnswer, deflater: Deflater | null, acceptEncoding: string | undefined) {
  const { listing, tail } = answer
  if (deflater && listing.head.byteLength >= GZIP_MIN_BYTES && acceptsGzip(acceptEncoding)) {
    // A failed compression is not kept: the next call of this version tries again.
    listing.gzip ??= gzipHead(deflater, listing.head).catch((error: unknown) => {
      listing.gzip = undefined
      throw error
    })
    return { chunks: gzipWithTail(deflater, await listing.gzip, tail), gzip: true }
  }
  return { chunks: [listing.head, tail], gzip: false }
}

/** A body of chunks sent as they are: a stream, because a single body would be one more copy. */
export function chunkStream(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk)
      controller.close()
    },
  })
}
