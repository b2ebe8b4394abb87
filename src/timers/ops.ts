// Timer operations as Queen 1.6's SDKs send them (docs/timers.md), checked and encoded for the
// procedures: the base64 payload decoded (and zstd-decompressed when `payloadZstd`) into the message
// body the fire will push, encrypted at schedule when the destination queue encrypts. Everything that would change the outcome and is
// not implemented is refused by name, never dropped.
import type { Context } from 'hono'
import { DbError } from '../db/errors.js'
import type { TimerOpArg } from '../db/procedures.js'
import { encrypt, keyring } from '../encryption.js'
import { HttpError } from '../errors.js'
import { wellFormed } from '../http/storable-json.js'
import type { AppEnv } from '../http/env.js'
import type { QueueFlag } from '../messages/encryption-flags.js'
import { NAME_MAX } from '../names.js'
import { ZstdTooLarge, zstdDecompress } from '../zstd/index.js'

/** Operations one call may carry, and the longest delay a schedule may ask for (90 days). */
export const TIMER_MAX_OPS = 256
export const TIMER_HORIZON_MS = 90 * 24 * 3600 * 1000
/** A timer becomes a message, so its payload may not exceed what a push accepts (nor 1 MiB). */
export const TIMER_MAX_PAYLOAD_BYTES = 1024 * 1024
const TIMER_KEY_MAX_BYTES = 512

const FIELDS = {
  schedule: ['op', 'queue', 'timerKey', 'partition', 'delayMs', 'txn', 'payload', 'payloadZstd'],
  reschedule: ['op', 'queue', 'timerKey', 'partition', 'delayMs', 'txn', 'payload', 'payloadZstd'],
  cancel: ['op', 'queue', 'timerKey', 'txn'],
} as const
/** Fields the broker owns: a client that could set them would forge a frame's provenance. */
const SERVER_OWNED = new Set(['producerSub', 'messageId', 'tenant', 'encrypted'])

const bad = (message: string) => new HttpError(400, 'timers_bad_request', message)
const utf8 = new TextEncoder()

/** A checked operation, before encoding: `bytes` is the decoded payload of a schedule. */
type Checked = { op: 'cancel'; queue: string; timerKey: string; txn?: string } | {
  op: 'schedule' | 'reschedule'
  queue: string
  timerKey: string
  partition: string
  delayMs: number
  txn: string
  payload: string
  bytes: Uint8Array
}

function name(where: string, field: string, value: unknown, max: number): string {
  if (typeof value !== 'string' || value === '') throw bad(`${where}.${field} must be a non-empty string`)
  if (utf8.encode(value).length > max) throw bad(`${where}.${field} is longer than ${max} bytes`)
  if (value.includes('\u0000')) throw bad(`${where}.${field} must not contain U+0000`)
  return value
}

function decodeBase64(where: string, text: unknown): Uint8Array {
  if (typeof text !== 'string' || text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) {
    throw bad(`${where}.payload must be base64`)
  }
  const binary = atob(text)
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}

function decompress(where: string, frame: Uint8Array, maxPayloadBytes: number): Uint8Array {
  try {
    return zstdDecompress(frame, maxPayloadBytes)
  } catch (error) {
    if (error instanceof ZstdTooLarge) throw new HttpError(413, 'payload_too_large', `${where}.payload decompresses to more than ${maxPayloadBytes} bytes`)
    throw bad(`${where}.payload is not a zstd frame this broker can read (payloadZstd is true): ${(error as Error).message}`)
  }
}

function toBase64(bytes: Uint8Array): string {
  let binary = ''
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(binary)
}

/** Checks one operation; `where` names it in refusals (`operations[2]`, `timers[0]`). */
export function checkTimerOp(raw: unknown, where: string, maxPayloadBytes: number): Checked {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad(`${where} must be an object`)
  const op = raw as Record<string, unknown>
  if (op.op !== 'schedule' && op.op !== 'reschedule' && op.op !== 'cancel') throw bad(`${where}.op must be schedule, reschedule or cancel`)
  const owned = Object.keys(op).filter((key) => SERVER_OWNED.has(key) || key.startsWith('_'))
  if (owned.length > 0) throw bad(`${where}: ${owned.join(', ')} is set by the broker, not the client`)
  const unknown = Object.keys(op).filter((key) => !(FIELDS[op.op as keyof typeof FIELDS] as readonly string[]).includes(key))
  if (unknown.length > 0) throw bad(`${where}: ${op.op} does not take ${unknown.join(', ')}`)
  const queue = name(where, 'queue', op.queue, NAME_MAX)
  const timerKey = name(where, 'timerKey', op.timerKey, TIMER_KEY_MAX_BYTES)
  if (op.op === 'cancel') {
    if (op.txn !== undefined && typeof op.txn !== 'string') throw bad(`${where}.txn must be a string`)
    return { op: 'cancel', queue, timerKey, ...(typeof op.txn === 'string' ? { txn: op.txn } : {}) }
  }
  if (op.payloadZstd !== undefined && typeof op.payloadZstd !== 'boolean') throw bad(`${where}.payloadZstd must be a boolean`)
  if (typeof op.delayMs !== 'number' || !Number.isInteger(op.delayMs)) throw bad(`${where}.delayMs must be an integer number of milliseconds`)
  const txn = name(where, 'txn', op.txn, NAME_MAX)
  const partition = op.partition === undefined || op.partition === null ? 'Default' : name(where, 'partition', op.partition, NAME_MAX)
  if (op.payload === undefined) throw bad(`${where}.payload is required`)
  const sent = decodeBase64(where, op.payload)
  if (sent.length > maxPayloadBytes) {
    throw new HttpError(413, 'payload_too_large', `${where}.payload is ${sent.length} bytes decoded (limit ${maxPayloadBytes})`)
  }
  if (op.payloadZstd !== true) return { op: op.op, queue, timerKey, partition, delayMs: op.delayMs, txn, payload: op.payload as string, bytes: sent }
  // Decompressed here rather than at the fire, so a frame no decoder can read is the client's 400
  // now, not a timer that fails later; the stored timer holds the plain payload.
  const bytes = decompress(where, sent, maxPayloadBytes)
  return { op: op.op, queue, timerKey, partition, delayMs: op.delayMs, txn, payload: toBase64(bytes), bytes }
}

/** Checks a batch: at most TIMER_MAX_OPS, and no (queue, timerKey) twice. */
export function checkTimerOps(raw: unknown, field: string, maxPayloadBytes: number): Checked[] {
  if (!Array.isArray(raw)) throw bad(`${field} must be an array`)
  if (raw.length > TIMER_MAX_OPS) throw bad(`at most ${TIMER_MAX_OPS} timer operations per call (got ${raw.length})`)
  const ops = raw.map((op, i) => checkTimerOp(op, `${field}[${i}]`, maxPayloadBytes))
  const seen = new Set<string>()
  ops.forEach((op, i) => {
    const id = JSON.stringify([op.queue, op.timerKey])
    if (seen.has(id)) throw bad(`${field}[${i}] names queue ${op.queue} timer ${op.timerKey} a second time`)
    seen.add(id)
  })
  return ops
}

/**
 * The message body a payload becomes: the JSON it encodes when it is UTF-8 JSON (what every SDK
 * sends for an object), otherwise the base64 text itself, since this broker's messages are JSON.
 */
function bodyOf(op: Extract<Checked, { bytes: Uint8Array }>): unknown {
  try {
    const body: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(op.bytes))
    // JSON can spell an unpaired surrogate (\ud800), which no stored message can hold.
    return wellFormed(body) ? body : op.payload
  } catch {
    return op.payload
  }
}

/** Encodes checked operations for the procedures: body decoded, encrypted when the queue encrypts. */
export async function encodeTimerOps(c: Context<AppEnv>, ops: readonly Checked[]): Promise<TimerOpArg[]> {
  const tenant = c.get('db').tenant
  const flags = c.get('encryptionFlags')
  const producerSub = c.get('principal').sub || undefined
  const config = c.get('config')
  return Promise.all(
    ops.map(async (op): Promise<TimerOpArg> => {
      if (op.op === 'cancel') return op
      const enc = flags.cached(tenant, op.queue)
      let data = bodyOf(op)
      if (enc) {
        const ring = await keyring(config.QUEEN_ENCRYPTION_KEY, config.QUEEN_ENCRYPTION_KEY_PREVIOUS)
        if (!ring.current) throw new HttpError(500, 'encryption_key_missing', `Queue ${op.queue} has encryptionEnabled but QUEEN_ENCRYPTION_KEY is not configured`)
        data = await encrypt(ring, data, { tenant, queue: op.queue, partition: op.partition || 'Default' })
      }
      const { bytes: _bytes, ...rest } = op
      return { ...rest, data, enc, ...(producerSub ? { producerSub } : {}) }
    }),
  )
}

/** The payload ceiling in force: Queen's 1 MiB, or less when a push's frame limit is smaller. */
export const timerPayloadLimit = (c: Context<AppEnv>) => Math.min(TIMER_MAX_PAYLOAD_BYTES, c.get('config').MAX_FRAME_BYTES)

/**
 * Runs `run` with the operations encoded; when the database refuses an encryption flag (QMENC), the
 * flag map is corrected and the operations are encoded and sent once more, as pushes are.
 */
export async function withTimerEncryption<T>(c: Context<AppEnv>, ops: readonly Checked[], run: (encoded: TimerOpArg[]) => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await run(await encodeTimerOps(c, ops))
    } catch (error) {
      if (attempt === 0 && error instanceof DbError && error.sqlstate === 'QMENC') {
        c.get('encryptionFlags').remember(c.get('db').tenant, (error.detail as { queues?: QueueFlag[] } | undefined)?.queues)
        continue
      }
      throw error
    }
  }
}
