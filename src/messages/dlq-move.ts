// The HTTP side of a dead-letter move (retry by address, replay by row id). The procedure's verdict
// decides the status, and each refusal keeps the verdict fields beside the error envelope, so a
// client can branch on `result` whatever the status (docs/admin-messages.md). A move whose stored
// payload and destination queue disagree on encryption, or whose sealed payload moves to another
// queue or partition (its AES-GCM binding), is finished here: SQL cannot decrypt or encrypt, so
// the payload is re-encoded for the destination and the row is moved again with it.
import type { Context } from 'hono'
import type { MoveVerdict } from '../db/procedures/dlq.js'
import { decrypt, encrypt, keyring } from '../encryption.js'
import { HttpError } from '../errors.js'
import type { AppEnv } from '../http/env.js'
import { wakePops } from './wake-pops.js'

const NOT_IN_DLQ = 'No dead-letter row for this address. Live messages live in immutable segments and cannot be replayed or deleted'

/** Where a replay goes; an absent half keeps the row's own queue or partition. */
export interface Destination {
  queue?: string | undefined
  partition?: string | undefined
}

/**
 * After an encryption_mismatch verdict: decrypts the stored payload if it is sealed, seals it for
 * the destination if that queue is encrypted, and moves the row again with it. The row is locked
 * anew by that second move, so a row moved or purged in between is `gone` as ever.
 */
export async function reencoded(c: Context<AppEnv>, verdict: MoveVerdict, to: Destination): Promise<MoveVerdict> {
  if (verdict.result !== 'encryption_mismatch') return verdict
  const config = c.get('config')
  const ring = await keyring(config.QUEEN_ENCRYPTION_KEY, config.QUEEN_ENCRYPTION_KEY_PREVIOUS)
  const refused = { success: false, result: 'encryption_mismatch', dlqId: verdict.dlqId, dlqRowRemoved: false }
  const tenant = c.get('tenant')
  let data = verdict.data
  if (verdict.encrypted) {
    const plain = await decrypt(ring, data, { tenant, queue: verdict.sourceQueue!, partition: verdict.sourcePartition! })
    if (!plain.ok) throw new HttpError(409, 'decrypt_failed', `The dead letter's payload cannot be decrypted (${plain.reason}), so it cannot be moved to a queue that stores plaintext`, refused)
    data = plain.data
  }
  if (verdict.destinationEncrypted) {
    if (!ring.current) throw new HttpError(500, 'encryption_key_missing', `Queue ${verdict.queue} has encryptionEnabled but QUEEN_ENCRYPTION_KEY is not configured`, refused)
    data = await encrypt(ring, data, { tenant, queue: verdict.queue!, partition: verdict.partition! })
  }
  const again = await c.get('db').call('log_dlq_replay_v1', { dlqId: verdict.dlqId!, queue: to.queue, partition: to.partition, data, enc: verdict.destinationEncrypted! })
  if (again.result === 'encryption_mismatch') {
    // The destination's flag changed between the two moves: nothing was written; a retry settles it.
    throw new HttpError(503, 'encryption_changed', 'Queue encryption changed during the replay; retry', refused, { 'Retry-After': '1' })
  }
  return again
}

/** `notFound` is what the 404 carries besides the verdict: the address, or the row id. */
export function answerMove(c: Context<AppEnv>, verdict: MoveVerdict, notFound: Record<string, unknown>): Response {
  switch (verdict.result) {
    case 'moved':
      wakePops(c, [verdict.queue!])
      c.get('metrics').pushed(['queued'])
      return c.json(verdict)
    case 'duplicate':
      return c.json(verdict)
    case 'gone':
      throw new HttpError(404, 'message_not_found', 'Message not found', { success: false, result: 'gone', ...notFound, message: NOT_IN_DLQ })
    case 'maintenance':
      throw new HttpError(
        503,
        'maintenance',
        'Push maintenance is on; retry later',
        { success: false, result: 'maintenance', dlqId: verdict.dlqId, dlqRowRemoved: false },
        { 'Retry-After': '5' },
      )
    case 'encryption_mismatch':
      // reencoded() resolves every mismatch first; one reaching here changed under the move.
      throw new HttpError(503, 'encryption_changed', 'Queue encryption changed during the replay; retry', { success: false, result: 'encryption_mismatch', dlqId: verdict.dlqId, dlqRowRemoved: false }, { 'Retry-After': '1' })
  }
}
