// POST /api/v1/push (API §5.4). Validates every item before anything is sent (a deterministic
// problem is a 4xx and writes nothing), encodes payloads per the queue's cached encryption flag,
// and makes one procedure call. When the database says the flag changed (QMENC) the items are
// re-encoded and sent once more (ENGINE §11.2); a second refusal is 503 encryption_changed.
// The transaction route reuses the item parser and the encoding loop.
import type { Context } from 'hono'
import { z } from 'zod'
import { DbError } from '../db/errors.js'
import type { PushItemArg } from '../db/procedures.js'
import { cachedFlag, encrypt, keyring, rememberFlags } from '../encryption.js'
import { HttpError } from '../errors.js'
import type { AppEnv } from '../http/env.js'
import { ROLE_SETS, route } from '../http/route.js'
import { pathText, positionOf, sentence, worded } from '../http/validate.js'
import { isUuid } from '../ids.js'
import { NAME_MAX } from '../names.js'
import { wakeKey } from '../pop-waker.js'

// Bytes a stored frame adds around its payload: id, txn, trace, sub, enc and jsonb's own spacing.
const FRAME_OVERHEAD = 96

/** A push item after validation, before encoding. */
export interface PushItem {
  queue: string
  partition: string
  transactionId: string | null
  traceId: string | null
  data: unknown
}

/** Queen's text for a fault, with the position suffix ` (items[N])` the path gives (API §5.4). */
export const queenText = (text: string) => ({ error: (iss: { path?: PropertyKey[] }) => `${text}${positionOf(iss.path)}` })

/** One push item. Empty partition, transactionId and traceId read as absent, as Queen's do. */
export const pushItem = z
  .object(
    {
      queue: z.string(queenText('Queue must be a string')).max(NAME_MAX, queenText(`Queue name must be at most ${NAME_MAX} characters`)),
      partition: z.string(queenText('Partition must be a string')).max(NAME_MAX, queenText(`Partition name must be at most ${NAME_MAX} characters`)).nullish(),
      transactionId: z.string(queenText('TransactionId must be a string')).max(NAME_MAX, queenText(`TransactionId must be at most ${NAME_MAX} characters`)).nullish(),
      traceId: z
        .string(queenText('TraceId must be a string'))
        .refine((v) => v === '' || isUuid(v), queenText('TraceId must be a UUID'))
        .nullish(),
      payload: z.unknown().optional().meta({ description: 'the message; `data` is accepted for it too' }),
      data: z.unknown().optional(),
    },
    queenText('Each item must be an object'),
  )
  .transform(
    (o): PushItem => ({
      queue: o.queue,
      partition: o.partition ? o.partition : 'Default',
      transactionId: o.transactionId ? o.transactionId : null,
      traceId: o.traceId ? o.traceId.toLowerCase() : null,
      data: 'payload' in o ? o.payload : 'data' in o ? o.data : {},
    }),
  )

/** A push items array: "items array is required", or "operations[2].items array is required" inside a transaction. */
export const pushItems = z.array(pushItem, { error: (iss) => `${pathText(iss.path)} array is required` })

export const pushBody = worded(z.object({ items: pushItems }), sentence)

/**
 * The item count limit is configuration, so no static schema can hold it; it is checked on the raw
 * body before the schema, where Queen checks it (after "is it an array", before any item).
 */
export function checkItemCount(raw: unknown, maxItems: number): void {
  if (Array.isArray(raw) && raw.length > maxItems) {
    throw new HttpError(413, 'payload_too_large', `Too many items: ${raw.length} (limit ${maxItems} per push)`)
  }
}

/**
 * One refusal is corrected and retried; the second propagates (503 encryption_changed). `where`
 * names an item's position for a 413 (`items[3]`), and is only called for one.
 */
export async function withEncryption<T>(
  c: Context<AppEnv>,
  items: readonly PushItem[],
  where: (index: number) => string,
  run: (encoded: PushItemArg[]) => Promise<T>,
  flagsOf: (result: T) => readonly { name: string; encryptionEnabled: boolean }[] | null | undefined,
): Promise<T> {
  const tenant = c.get('tenant')
  const config = c.get('config')
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
    if (!items.some((item) => cachedFlag(tenant, item.queue))) return items.map((item, index) => frame(item, index, false, item.data))
    return Promise.all(
      items.map(async (item, index) => {
        const enc = cachedFlag(tenant, item.queue)
        if (enc && !ring.current) {
          throw new HttpError(500, 'encryption_key_missing', `Queue ${item.queue} has encryptionEnabled but QUEEN_ENCRYPTION_KEY is not configured`)
        }
        return frame(item, index, enc, enc ? await encrypt(ring, item.data) : item.data)
      }),
    )
  }
  for (let attempt = 0; ; attempt++) {
    const encoded = await encode()
    try {
      const result = await run(encoded)
      rememberFlags(tenant, flagsOf(result))
      return result
    } catch (error) {
      if (attempt === 0 && error instanceof DbError && error.sqlstate === 'QMENC') {
        rememberFlags(tenant, (error.detail as { queues?: { name: string; encryptionEnabled: boolean }[] } | undefined)?.queues)
        continue
      }
      throw error
    }
  }
}

/** Wakes this process's long-polls parked on the queues just written (D24). */
export function wakePops(c: Context<AppEnv>, queues: Iterable<string>): void {
  c.get('popWaker')?.notify([...new Set(queues)].map((q) => wakeKey(c.get('tenant'), q)))
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

export const pushRoutes = [
  route(
    {
      method: 'POST',
      path: '/api/v1/push',
      summary: 'Append messages to queue partitions',
      roles: ROLE_SETS.W_RW_A,
      tenant: 'required',
      body: 'required',
      request: { body: pushBody, admit: (c, raw) => checkItemCount(raw.items, c.get('config').MAX_PUSH_ITEMS) },
    },
    async (c, { body }) => {
      const { items } = body
      if (items.length === 0) return c.json([], 201)
      const result = await withEncryption(
        c,
        items,
        (i) => `items[${i}]`,
        (encoded) => c.get('db').call('log_push_v1', { tenant: c.get('tenant'), items: encoded }),
        (r) => r.queues,
      )
      wakePops(c, items.map((i) => i.queue))
      c.get('metrics').pushed(result.items.map((r) => r.status))
      return c.json(
        result.items.map((r) =>
          r.status === 'queued'
            ? { index: r.index, transaction_id: r.transactionId, status: r.status, message_id: r.messageId, partition_id: r.partitionId, trace_id: r.traceId, queueName: r.queue, offset: r.offset }
            : { index: r.index, transaction_id: r.transactionId, status: r.status, message_id: r.messageId, partition_id: r.partitionId, queueName: r.queue, offset: r.offset },
        ),
        201,
      )
    },
  ),
]
