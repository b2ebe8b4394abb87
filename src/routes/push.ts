// POST /api/v1/push. Validates every item before anything is sent (a deterministic
// problem is a 4xx and writes nothing), encodes payloads per the queue's cached encryption flag,
// and makes one procedure call. When the database says the flag changed (QMENC) the items are
// re-encoded and sent once more (design decision 24); a second refusal is 503 encryption_changed.
// The item schema and the encoding loop live in src/messages/, shared with /transaction and streams.
import { z } from 'zod'
import { ROLE_SETS, route } from '../http/route.js'
import { sentence, worded } from '../http/validate.js'
import { withEncryption } from '../messages/encode.js'
import { checkItemCount, pushItems } from '../messages/push-items.js'
import { wakePops } from '../messages/wake-pops.js'

export const pushBody = worded(z.object({ items: pushItems }), sentence)

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
        (encoded) => c.get('db').call('log_push_v1', { items: encoded }),
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
