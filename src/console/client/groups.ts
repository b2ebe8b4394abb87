// Browser module groups.js: consumer groups with their lag (GET /api/v1/consumer-groups) and one
// group's per-partition cursors (GET /api/v1/consumer-groups/:group).
export const GROUPS_JS = String.raw`
import { api, seg } from './api.js'
import { h, link, num, seconds, table, time } from './dom.js'

export async function groupsView() {
  const groups = await api('/api/v1/consumer-groups')
  const list = table([
    { label: 'Group', cell: (g) => link('/console/groups/' + seg(g.name), g.name) },
    { label: 'Queue', cell: (g) => link('/console/queues/' + seg(g.queueName), g.queueName) },
    { label: 'State', cell: (g) => h('span', { class: 'state ' + g.state.toLowerCase() }, g.state) },
    { label: 'Members', num: true, cell: (g) => num(g.members) },
    { label: 'Partitions lagging', num: true, cell: (g) => num(g.partitionsWithLag) },
    { label: 'Lag (messages)', num: true, cell: (g) => num(g.totalLag) },
    { label: 'Max time lag', num: true, cell: (g) => seconds(g.maxTimeLag) },
    { label: 'Subscription', cell: (g) => g.subscriptionMode || '–' },
  ], groups, 'No consumer groups yet.')
  list.setAttribute('data-testid', 'groups')
  return [h('h1', {}, 'Consumer groups'), list,
    h('p', { class: 'muted' }, 'Lag is live: offsets not yet committed by the group. State: Stable under 5 min of lag; Lagging at or above it while still settling; Dead otherwise.')]
}

export async function groupView(name) {
  const detail = await api('/api/v1/consumer-groups/' + seg(name))
  const sections = Object.entries(detail).map(([queue, d]) => [
    h('h2', {}, link('/console/queues/' + seg(queue), queue), d.conflation ? ' (conflating)' : ''),
    table([
      { label: 'Partition', cell: (p) => p.partition },
      { label: 'Committed offset', num: true, cell: (p) => num(p.committedOffset) },
      { label: 'Lag', num: true, cell: (p) => num(p.offsetLag) },
      { label: 'Time lag', num: true, cell: (p) => seconds(p.timeLagSeconds) },
      { label: 'Consumed', num: true, cell: (p) => num(p.totalConsumed) },
      { label: 'Last consumed', cell: (p) => time(p.lastConsumedAt) },
      { label: 'Leased', cell: (p) => (p.leaseActive ? 'yes' : 'no') },
    ], d.partitions),
  ])
  return [h('h1', {}, 'Consumer group ', name), sections.length ? sections : h('p', { class: 'muted' }, 'This group is on no queue.')]
}
`
