// UUIDv7 (RFC 9562) from WebCrypto, identical on Node and Workers: request ids and the instance id
// are time-ordered, like the message and lease ids the engine mints in SQL.

// Every request mints one, and a getRandomValues call costs far more than 10 bytes of output:
// random bytes are drawn POOL_BYTES at a time (a multiple of 10, far below WebCrypto's 64 KiB cap)
// and handed out 10 at a time. Filled lazily: a Worker may not draw randomness at module scope.
const POOL_BYTES = 10 * 512
let pool: Uint8Array | undefined
let used = POOL_BYTES

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'))

export function uuidv7(now = Date.now()): string {
  if (used === POOL_BYTES) {
    pool = crypto.getRandomValues(new Uint8Array(POOL_BYTES))
    used = 0
  }
  const r = pool!
  const at = used
  used += 10
  // 48 bits of Unix milliseconds, then version 7 and the variant over 74 random bits.
  const ms = Math.floor(now).toString(16).padStart(12, '0').slice(-12)
  let hex = `${ms.slice(0, 8)}-${ms.slice(8)}-${HEX[(r[at]! & 0x0f) | 0x70]}${HEX[r[at + 1]!]}-${HEX[(r[at + 2]! & 0x3f) | 0x80]}${HEX[r[at + 3]!]}-`
  for (let i = at + 4; i < at + 10; i++) hex += HEX[r[i]!]
  return hex
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Whether client text is a UUID, so it can be cast in SQL: a malformed id is "not found", never a 500. */
export const isUuid = (text: string): boolean => UUID.test(text)
