// The archive sinks, GET /api/v1/sinks (docs/sink.md): each sink's committed pointer, how far it
// lags, its last object, and whether its retentionSinkHold is what keeps retention from deleting
// (a sink that stopped makes the queue grow up to the hold's cap).
import { api, seg } from './api.js'
import { duration, h, link, num, table, time, type Child } from './dom.js'

/** One sink on one queue: its pointer, lag and hold. */
interface SinkRow {
  sink: string
  queue: string
  running: boolean
  ran: boolean
  windowEnd: string | null
  lagFrames: number | null
  lagSeconds: number | null
  framesArchived: number
  lastObject: string | null
  format?: string | null
  compression?: string | null
  layout?: string | null
  lastWindow?: { start: string; end: string; frames: number; objects: number } | null
  holdNamesSink: boolean
  holdingRetention: boolean
}

export async function sinksView(): Promise<Child[]> {
  const { sinks } = await api<{ sinks: SinkRow[] }>('/api/v1/sinks')
  const list = table<SinkRow>([
    { label: 'Sink', cell: (s) => s.sink },
    { label: 'Queue', cell: (s) => link('/console/queues/' + seg(s.queue), s.queue) },
    { label: 'State', cell: (s) => (s.running ? 'running' : s.ran ? 'stopped' : 'never ran') },
    { label: 'Committed up to', cell: (s) => time(s.windowEnd) },
    { label: 'Lag (frames)', num: true, cell: (s) => num(s.lagFrames) },
    { label: 'Lag', num: true, cell: (s) => duration(s.lagSeconds) },
    { label: 'Archived', num: true, cell: (s) => num(s.framesArchived) },
    { label: 'Format', cell: (s) => (s.format ? `${s.format}${s.compression && s.compression !== 'none' ? ` (${s.compression})` : ''}, ${s.layout ?? ''}` : '–') },
    { label: 'Last closed window', cell: (s) => (s.lastWindow ? h('span', {}, time(s.lastWindow.start), ' – ', time(s.lastWindow.end), ` (${s.lastWindow.frames} frames)`) : '–') },
    { label: 'Last object', cell: (s) => (s.lastObject ? h('code', {}, s.lastObject) : '–') },
    { label: 'Hold', cell: (s) => (!s.holdNamesSink ? 'no hold' : s.holdingRetention ? h('span', { class: 'badge stale' }, 'holding retention') : 'not holding') },
  ], sinks, 'No sink has run and no queue names one in retentionSinkHold.')
  list.setAttribute('data-testid', 'sink-list')
  return [
    h('h1', {}, 'Archive sinks'),
    list,
    h('p', { class: 'muted' }, 'A queue whose retentionSinkHold names a sink keeps what that sink has not committed (up to retentionSinkHoldMaxSeconds); "holding retention" means its age retention would otherwise delete more.'),
  ]
}
