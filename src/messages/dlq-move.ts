// The HTTP answer of a dead-letter move (retry by address, replay by row id): the procedure's
// verdict decides the status, and each refusal keeps the verdict fields beside the error envelope,
// so a client can branch on `result` whatever the status (docs/admin-messages.md).
import type { Context } from 'hono'
import type { MoveVerdict } from '../db/procedures/dlq.js'
import { HttpError } from '../errors.js'
import type { AppEnv } from '../http/env.js'
import { wakePops } from './wake-pops.js'

const NOT_IN_DLQ = 'No dead-letter row for this address. Live messages live in immutable segments and cannot be replayed or deleted'

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
      throw new HttpError(
        409,
        'encryption_mismatch',
        verdict.encrypted ? 'The dead letter is encrypted and the destination queue is not' : 'The destination queue is encrypted and the dead letter is not',
        { success: false, result: 'encryption_mismatch', dlqId: verdict.dlqId, queue: verdict.queue, dlqRowRemoved: false },
      )
  }
}
