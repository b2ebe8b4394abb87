// Per-message DelaySeconds: the message waits as a timer of the engine and becomes a message of its
// queue when the timer fires. Its MessageId is minted here, because no message exists to answer
// one until then, and travels in the envelope. The timer key's prefix lets GetQueueAttributes
// count the delayed messages of a queue.
import type { AwsContext } from '../../aws/mount.js'
import { TIMER_HORIZON_MS } from '../../timers/ops.js'
import type { Envelope } from '../envelope.js'
import { wrap } from '../envelope.js'

export const DELAY_PREFIX = 'sqs-delay:'

export interface DelayedSend {
  queue: string
  partition: string
  delaySeconds: number
  envelope: Envelope & { i: string }
}

/** Schedules the sends; answers, per send, whether the engine took it (a kill switch may refuse). */
export async function scheduleDelayed(c: AwsContext, sends: readonly DelayedSend[]): Promise<{ ok: boolean; status: string }[]> {
  if (sends.length === 0) return []
  const ops = sends.map((s) => {
    const data = wrap(s.envelope)
    return {
      op: 'schedule' as const,
      queue: s.queue,
      timerKey: `${DELAY_PREFIX}${s.envelope.i}`,
      partition: s.partition,
      delayMs: s.delaySeconds * 1000,
      txn: s.envelope.d ?? s.envelope.i,
      payload: base64(new TextEncoder().encode(JSON.stringify(data))),
      data,
      enc: false,
      producerSub: c.get('principal').sub ?? undefined,
    }
  })
  const result = await c.get('db').call('timers_apply_v1', { ops, horizonMs: TIMER_HORIZON_MS })
  return result.results.map((r) => ({ ok: r.ok, status: r.status }))
}

function base64(bytes: Uint8Array): string {
  let binary = ''
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(binary)
}
