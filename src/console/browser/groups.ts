// Consumer groups with their lag (GET /api/v1/consumer-groups), those the broker reports as lagging
// highlighted (GET /api/v1/consumer-groups/lagging), and one group's cursors per queue and
// partition (GET /api/v1/consumer-groups/:group) with a chart of its lag over the last hour,
// sampled by this page (lag-history.ts: the broker keeps no per-group history).
import { QUEUE_MODE } from '../../names.js'
import { capabilities, deleteGroupButton, seekButtons } from './actions.js'
import { api, seg } from './api.js'
import { lineChart } from './chart.js'
import { duration, h, link, num, rowLink, seconds, table, time, type Child, type Navigate } from './dom.js'
import { lagSamples } from './lag-history.js'

// A group is highlighted when its oldest unconsumed message is at least this old: the 5 minutes
// at which the broker's own state turns from Stable to Lagging. ?minLag= in the URL overrides it.
const DEFAULT_MIN_LAG = 300

/** One group on one queue, from GET /api/v1/consumer-groups. */
export interface GroupSummary {
  name: string
  queueName: string
  state: string
  members: number
  partitionsWithLag: number
  totalLag: number
  maxTimeLag: number | null
  subscriptionMode: string | null
  subscriptionTimestamp: string | null
}

/** One partition cursor with an unconsumed message older than the threshold. */
interface LaggingCursor {
  consumer_group: string
  queue_name: string
  partition_name: string
}

/** One group's cursor on one partition; committedOffset is the next offset it will read. */
export interface GroupCursor {
  partition: string
  committedOffset: number
  offsetLag: number | null
  timeLagSeconds: number | null
  totalConsumed: number
  lastConsumedAt: string | null
  leaseActive: boolean
}

/** GET /api/v1/consumer-groups/:group: the group's cursors, by queue name. */
export type GroupDetail = Record<string, { conflation?: boolean; partitions: GroupCursor[] }>

function minLagOf(params: URLSearchParams | undefined): number {
  const v = Number.parseInt(params?.get('minLag') ?? '', 10)
  return Number.isFinite(v) && v >= 0 ? v : DEFAULT_MIN_LAG
}

const laggingKey = (group: string, queue: string) => group + '\u0000' + queue

export async function groupsView(params: URLSearchParams): Promise<Child[]> {
  const minLag = minLagOf(params)
  const [groups, lagging] = await Promise.all([api<GroupSummary[]>('/api/v1/consumer-groups'), api<LaggingCursor[]>('/api/v1/consumer-groups/lagging?minLagSeconds=' + minLag)])
  const late = new Set(lagging.map((l) => laggingKey(l.consumer_group, l.queue_name)))
  const isLate = (g: GroupSummary) => late.has(laggingKey(g.name, g.queueName))
  const href = (g: GroupSummary) => '/console/groups/' + seg(g.name)
  const list = table<GroupSummary>([
    { label: 'Group', cell: (g) => [g.name === QUEUE_MODE ? 'queue mode' : link(href(g), g.name), isLate(g) ? h('span', { class: 'badge stale', 'data-testid': 'lagging-' + g.name }, 'lagging') : null] },
    { label: 'Queue', cell: (g) => link('/console/queues/' + seg(g.queueName), g.queueName) },
    { label: 'State', cell: (g) => h('span', { class: 'state ' + g.state.toLowerCase() }, g.state) },
    { label: 'Members', num: true, cell: (g) => num(g.members) },
    { label: 'Partitions lagging', num: true, cell: (g) => num(g.partitionsWithLag) },
    { label: 'Lag (messages)', num: true, cell: (g) => num(g.totalLag) },
    { label: 'Max time lag', num: true, cell: (g) => duration(g.maxTimeLag) },
    { label: 'Subscription', cell: (g) => g.subscriptionMode || '–' },
  ], groups, 'No consumer groups yet.', (g) => ({ ...(g.name === QUEUE_MODE ? {} : rowLink(href(g))), class: isLate(g) ? 'rowlink lagging' : g.name === QUEUE_MODE ? null : 'rowlink' }))
  list.setAttribute('data-testid', 'groups')
  const thresholds: [number, string][] = [[0, 'any age'], [60, '1 min'], [DEFAULT_MIN_LAG, '5 min'], [3600, '1 h']]
  return [h('h1', {}, 'Consumer groups'),
    h('p', { class: 'pager' }, 'Highlight groups with an unconsumed message older than: ',
      thresholds.map(([s, label]) => (s === minLag ? h('strong', {}, label) : link('/console/groups' + (s === DEFAULT_MIN_LAG ? '' : '?minLag=' + s), label))).flatMap((x) => [x, ' '])),
    h('p', { class: 'muted', 'data-testid': 'lagging-rule' }, lagging.length
      ? lagging.length + ' partition cursors have an unconsumed message older than ' + seconds(minLag) + ' (highlighted).'
      : 'No group has an unconsumed message older than ' + seconds(minLag) + '.'),
    list,
    h('p', { class: 'muted' }, 'Lag is live: offsets not yet committed by the group. State: Stable under 5 min of lag; Lagging at or above it while still settling; Dead otherwise.')]
}

export async function groupView(name: string, navigate: Navigate): Promise<Child[]> {
  const [detail, groups, lagging, caps] = await Promise.all([api<GroupDetail>('/api/v1/consumer-groups/' + seg(name)), api<GroupSummary[]>('/api/v1/consumer-groups'),
    api<LaggingCursor[]>('/api/v1/consumer-groups/lagging?minLagSeconds=' + DEFAULT_MIN_LAG), capabilities()])
  const mine = groups.filter((g) => g.name === name)
  const late = new Set(lagging.filter((l) => l.consumer_group === name).map((l) => l.queue_name + '\u0000' + l.partition_name))
  const queues = Object.entries(detail)
  const totals = Object.fromEntries(queues.map(([q, d]) => [q, d.partitions.reduce((sum, p) => sum + Number(p.offsetLag || 0), 0)]))
  const history = lagSamples(name, totals)
  const sections = queues.map(([queue, d]) => {
    const g = mine.find((x) => x.queueName === queue)
    const cursors = table<GroupCursor>([
      { label: 'Partition', cell: (p) => [link('/console/queues/' + seg(queue) + '/partitions/' + seg(p.partition), p.partition), late.has(queue + '\u0000' + p.partition) ? h('span', { class: 'badge stale' }, 'lagging') : null] },
      { label: 'Next offset to read', num: true, cell: (p) => num(p.committedOffset) },
      { label: 'Lag', num: true, cell: (p) => h('span', { 'data-testid': 'lag-' + queue + '-' + p.partition }, num(p.offsetLag)) },
      { label: 'Time lag', num: true, cell: (p) => duration(p.timeLagSeconds) },
      { label: 'Consumed', num: true, cell: (p) => num(p.totalConsumed) },
      { label: 'Last consumed', cell: (p) => time(p.lastConsumedAt) },
      { label: 'Leased', cell: (p) => (p.leaseActive ? 'yes' : 'no') },
    ], d.partitions, 'No cursor yet.', (p) => ({ class: late.has(queue + '\u0000' + p.partition) ? 'lagging' : null }))
    cursors.setAttribute('data-testid', 'cursors-' + queue)
    return [
      h('div', { class: 'title' },
        h('h2', {}, link('/console/queues/' + seg(queue), queue), d.conflation ? ' (conflating)' : ''),
        caps.write ? seekButtons(name, queue, totals[queue] ?? 0, navigate) : null),
      h('p', { class: 'muted' }, 'Subscription: ', h('strong', { 'data-testid': 'subscription-' + queue }, g?.subscriptionMode || '–'),
        g?.subscriptionTimestamp ? ' from ' + g.subscriptionTimestamp : '', ' · total lag ', h('strong', { 'data-testid': 'total-lag-' + queue }, num(totals[queue])), ' · state ', g?.state || '–'),
      cursors,
    ]
  })
  const names = queues.map(([q]) => q)
  const chart = names.length ? h('div', { class: 'charts', 'data-testid': 'lag-chart' },
    lineChart('Lag (messages), sampled while this page is open, last hour', history.times,
      names.map((q, i) => ({ label: q, cls: 'lag' + (i % 4), values: history.values(q) })))) : null
  return [
    h('div', { class: 'title' }, h('h1', {}, 'Consumer group ', name), caps.admin && names.length ? deleteGroupButton(name, names, navigate) : null),
    sections.length ? sections : h('p', { class: 'muted' }, 'This group is on no queue.'),
    chart,
    chart ? h('p', { class: 'muted' }, 'The broker keeps no per-group lag history; this chart is sampled by the console at each refresh and kept in this tab for an hour.') : null,
  ]
}
