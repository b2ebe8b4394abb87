// The ephemeral queues, GET /api/v1/ephemeral/queues (docs/ephemeral.md): each queue's tier, what
// its ring holds, its drops by cause, and the depth of every consumer group, which is what tells a
// slow consumer from a fast producer.
import { api } from './api.js'
import { bytes, h, num, table, type Child } from './dom.js'

interface GroupDepth {
  group: string | null
  pending: number
}

interface EphemeralQueue {
  queue: string
  tier: 'declared' | 'implicit'
  depth: number
  bytes: number
  partitions: number
  drops: { bounds: number; ttl: number; retry: number }
  options: { maxLength: number; maxBytes: number; policy: string }
  groupDepths: GroupDepth[]
}

const groupCell = (groups: GroupDepth[]): Child =>
  groups.length === 0 ? '–' : h('span', {}, groups.map((g) => (g.group ?? '(queue mode)') + ': ' + g.pending).join(', '))

export async function ephemeralView(): Promise<Child[]> {
  const { queues, cellBytes } = await api<{ queues: EphemeralQueue[]; cellBytes: number }>('/api/v1/ephemeral/queues')
  const list = table<EphemeralQueue>([
    { label: 'Queue', cell: (q) => q.queue },
    { label: 'Tier', cell: (q) => q.tier },
    { label: 'Depth', num: true, cell: (q) => num(q.depth) },
    { label: 'Bytes', num: true, cell: (q) => bytes(q.bytes) },
    { label: 'Partitions', num: true, cell: (q) => num(q.partitions) },
    { label: 'Pending per group', cell: (q) => groupCell(q.groupDepths) },
    { label: 'Drops (bounds / ttl / retry)', cell: (q) => `${q.drops.bounds} / ${q.drops.ttl} / ${q.drops.retry}` },
    { label: 'Bounds', cell: (q) => `${q.options.maxLength} msgs, ${q.options.maxBytes} B, ${q.options.policy}` },
  ], queues, 'No ephemeral queue: a push, a pop or a configure creates one.')
  list.setAttribute('data-testid', 'ephemeral-list')
  return [
    h('h1', {}, 'Ephemeral queues'),
    list,
    h('p', { class: 'muted' }, `Contents may be lost (a PostgreSQL crash or failover empties them); declarations are kept. All tenants together hold ${cellBytes} bytes.`),
  ]
}
