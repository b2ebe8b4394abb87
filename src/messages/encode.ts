// Push items as the push procedures take them: each sized against MAX_FRAME_BYTES and encrypted
// when the app's flag map says its queue is. When the database refuses a flag (QMENC), the map is
// corrected and the items are encoded and sent once more; a second refusal propagates (503
// encryption_changed). /push, /transaction and the stream cycle all write through this.
import type { Context } from 'hono'
import { DbError } from '../db/errors.js'
import type { PushItemArg } from '../db/procedures.js'
import { encrypt, keyring } from '../encryption.js'
import { HttpError } from '../errors.js'
import type { AppEnv } from '../http/env.js'
import type { QueueFlag } from './encryption-flags.js'
import type { PushItem } from './push-items.js'

// Bytes a stored frame adds around its payload: id, txn, trace, sub, enc and jsonb's own spacing.
const FRAME_OVERHEAD = 96

/**
 * One refusal is corrected and retried; the second propagates (503 encryption_changed). `where`
 * names an item's position for a 413 (`items[3]`), and is only called for one.
 */
export async function withEncryption<T>(
  c: Context<AppEnv>,
  items: readonly PushItem[],
  where: (index: number) => string,
  run: (encoded: PushItemArg[]) => Promise<T>,
  flagsOf: (result: T) => readonly QueueFlag[] | null | undefined,
): Promise<T> {
  // The flags are the tenant's whose database `run` writes to: the handle's.
  const tenant = c.get('db').tenant
  const config = c.get('config')
  const flags = c.get('encryptionFlags')
  const ring = await keyring(config.QUEEN_ENCRYPTION_KEY, config.QUEEN_ENCRYPTION_KEY_PREVIOUS)
  const producerSub = c.get('principal').sub || null
  const frame = (item: PushItem, index: number, enc: boolean, data: unknown): PushItemArg => {
    const bytes = utf8Length(JSON.stringify(data) ?? 'null') + utf8Length(item.transactionId ?? '') + utf8Length(producerSub ?? '') + FRAME_OVERHEAD
    if (bytes > config.MAX_FRAME_BYTES) {
      throw new HttpError(413, 'payload_too_large', `Item too large: ${bytes} bytes stored (limit ${config.MAX_FRAME_BYTES}) (${where(index)})`)
    }
    const arg: PushItemArg = { index, queue: item.queue, partition: item.partition, data }
    if (item.transactionId !== null) arg.transactionId = item.transactionId
    if (item.traceId !== null) arg.traceId = item.traceId
    if (producerSub !== null) arg.producerSub = producerSub
    if (enc) arg.enc = true
    return arg
  }
  const encode = async (): Promise<PushItemArg[]> => {
    // Without an encrypted queue nothing awaits, so a plain loop gives the same items and the same
    // first failure as the concurrent one below, without a promise per item.
    if (!items.some((item) => flags.cached(tenant, item.queue))) return items.map((item, index) => frame(item, index, false, item.data))
    return Promise.all(
      items.map(async (item, index) => {
        const enc = flags.cached(tenant, item.queue)
        if (enc && !ring.current) {
          throw new HttpError(500, 'encryption_key_missing', `Queue ${item.queue} has encryptionEnabled but QUEEN_ENCRYPTION_KEY is not configured`)
        }
        return frame(item, index, enc, enc ? await encrypt(ring, item.data, { tenant, queue: item.queue, partition: item.partition }) : item.data)
      }),
    )
  }
  for (let attempt = 0; ; attempt++) {
    const encoded = await encode()
    try {
      const result = await run(encoded)
      flags.remember(tenant, flagsOf(result))
      return result
    } catch (error) {
      if (attempt === 0 && error instanceof DbError && error.sqlstate === 'QMENC') {
        flags.remember(tenant, (error.detail as { queues?: QueueFlag[] } | undefined)?.queues)
        continue
      }
      throw error
    }
  }
}

function utf8Length(text: string): number {
  let n = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x80) n += 1
    else if (code < 0x800) n += 2
    else if (code >= 0xd800 && code <= 0xdbff) {
      n += 4
      i++
    } else n += 3
  }
  return n
}
