// POST /api/v1/fetch (docs/sink-protocol.md): a read of partition logs by offset, the read half
// of partitions/changed. Not a pop: no lease, cursor or group; nothing written. Encrypted
// payloads are decrypted here (the database never holds the key).
import { z } from 'zod'
import { route } from '../http/route.js'
import { entriesBody, partitionLogRead } from '../partitions/entries-body.js'
import { reveal } from '../reveal.js'

const positive = z.number().int('must be an integer').positive('must be positive')

const fetchEntry = z.object({
  queue: z.string({ error: 'must be a string' }),
  partition: z.string({ error: 'must be a string' }).min(1, 'must not be empty'),
  fromOffset: z.number().int('must be an integer').nonnegative('must not be negative'),
  // Clamped by the procedure to 10 000 frames and 8 MiB.
  limit: positive.optional(),
  maxBytes: positive.optional(),
})

// Queen's fetch parks for up to `maxWaitMs` when nothing is there yet; this one answers at once, so a
// wait it would not honour is refused by name rather than dropped. 0 (answer now) is the same call.
// Queen's minBytes only matters while parked, so it is not read.
export const fetchBody = entriesBody(fetchEntry).extend({
  maxWaitMs: z
    .number({ error: 'must be a number' })
    .nullish()
    .refine((v) => v === undefined || v === null || v === 0, 'is not supported: this fetch never parks; poll again instead'),
})

export const fetchRoutes = [
  route({ ...partitionLogRead, path: '/api/v1/fetch', summary: 'Read partition logs by offset (no lease, cursor or group)', request: { body: fetchBody } }, async (c, { body }) => {
    const result = await c.get('db').call('log_fetch_v1', { entries: body.entries })
    const entries = await Promise.all(
      result.entries.map(async (entry) => ('frames' in entry ? { ...entry, frames: await reveal(c.get('config'), entry.frames, () => ({ tenant: c.get('db').tenant, queue: entry.queue, partition: entry.partition })) } : entry)),
    )
    return c.json({ entries })
  }),
]
