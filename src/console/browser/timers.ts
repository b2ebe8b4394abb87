// Timers of one queue (docs/timers.md): choose a queue, count its pending timers under a key prefix
// (GET /api/v1/timers/:queue?mode=count&prefix=, which takes no empty prefix), list them in keyset
// pages (GET /api/v1/timers/:queue; the list carries no payloads), peek at one with its payload
// (GET /api/v1/timers/:queue/*timerKey) and, for a session that may write, cancel one
// (DELETE on the same path) after a confirmation.
import { actionButton, capabilities } from './actions.js'
import { api, seg } from './api.js'
import { h, link, num, table, time, type Child, type Navigate } from './dom.js'
import type { QueueListing } from './queues.js'

const PAGE = 50

interface TimerRow {
  queue: string
  timerKey: string
  partition: string
  deliverAt: string
  txn: string
  messageId: string
  attempts: number
  lastError: string | null
  encrypted: boolean
  createdAt: string
}

interface TimerPage {
  rows: TimerRow[]
  truncated: boolean
  nextAfter: string | null
}

type Peeked = ({ found: true; payload: string; updatedAt: string } & TimerRow) | { found: false; queue: string; timerKey: string }

interface Cancelled {
  ok: boolean
  status: 'cancelled' | 'absent'
}

/** The timers page of a queue, with what else the address holds. */
const pagePath = (queue: string, extra: Record<string, string> = {}) =>
  '/console/timers?queue=' + seg(queue) + Object.entries(extra).map(([k, v]) => '&' + k + '=' + seg(v)).join('')

const timerPath = (queue: string, timerKey: string) => '/api/v1/timers/' + seg(queue) + '/' + seg(timerKey)

/** The payload as stored is base64; shown as the JSON (or text) it carries, unless it is ciphertext. */
function payloadText(payload: string, encrypted: boolean): string {
  if (encrypted) return payload + '\n(encrypted at schedule; shown as stored)'
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(atob(payload), (c) => c.charCodeAt(0)))
    try {
      return JSON.stringify(JSON.parse(text), null, 2)
    } catch {
      return text
    }
  } catch {
    return payload + '\n(not UTF-8; shown as base64)'
  }
}

function cancelButton(queue: string, t: { timerKey: string; deliverAt: string }, testid: string, navigate: Navigate): HTMLButtonElement {
  return actionButton('Cancel', testid,
    'Cancel timer "' + t.timerKey + '" of queue "' + queue + '", due ' + t.deliverAt + '? Its message will never be pushed. This cannot be undone.',
    async () => {
      const r = await api<Cancelled>(timerPath(queue, t.timerKey), { method: 'DELETE' })
      const message = r.status === 'cancelled' ? 'Cancelled timer ' + t.timerKey + ' of ' + queue + '.' : 'Timer ' + t.timerKey + ' of ' + queue + ' was no longer pending (fired or cancelled); nothing cancelled.'
      return { to: pagePath(queue), message }
    }, navigate)
}

/** A form whose one field goes into the address as name=value. */
function addressForm(label: string, button: string, name: string, value: string, testid: string, go: (value: string) => void, list?: string): HTMLFormElement {
  const input = h('input', { type: 'text', name, value, list: list ?? null, 'data-key': testid, 'data-testid': testid, 'aria-label': label, size: 30 })
  const form = h('form', { method: 'post', class: 'inline-form' }, h('label', {}, label + ' ', input), h('button', { type: 'submit' }, button))
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    if (input.value.trim()) go(input.value.trim())
  })
  return form
}

function peekPanel(queue: string, p: Peeked, write: boolean, navigate: Navigate): Child[] {
  if (!p.found) return [h('h2', {}, 'Timer ', p.timerKey), h('p', { class: 'muted', 'data-testid': 'timer-peek' }, 'No pending timer under this key: it fired, was cancelled, or never existed.')]
  return [
    h('h2', {}, 'Timer ', p.timerKey),
    h('div', { class: 'facts', 'data-testid': 'timer-peek' },
      h('span', { class: 'muted' }, 'Partition'), h('span', {}, p.partition),
      h('span', { class: 'muted' }, 'Due'), h('span', {}, time(p.deliverAt), ' (' + p.deliverAt + ')'),
      h('span', { class: 'muted' }, 'Transaction id'), h('code', {}, p.txn),
      h('span', { class: 'muted' }, 'Message id'), h('code', {}, p.messageId),
      h('span', { class: 'muted' }, 'Attempts'), h('span', {}, num(p.attempts), p.lastError ? ', last error: ' + p.lastError : ''),
      h('span', { class: 'muted' }, 'Scheduled'), h('span', {}, time(p.createdAt), ', updated ', time(p.updatedAt))),
    h('pre', { class: 'payload', 'data-testid': 'timer-payload' }, payloadText(p.payload, p.encrypted)),
    write ? h('p', {}, cancelButton(queue, p, 'cancel-peeked-timer', navigate)) : '',
  ]
}

export async function timersView(params: URLSearchParams, navigate: Navigate): Promise<Child[]> {
  const queue = params.get('queue')
  const { queues } = await api<QueueListing>('/api/v1/resources/queues')
  const names = h('datalist', { id: 'timer-queues' }, queues.map((q) => h('option', { value: q.name })))
  const chooser = addressForm('Queue', 'Show', 'queue', queue ?? '', 'timers-queue', (name) => navigate(pagePath(name)), 'timer-queues')
  if (queue === null) {
    return [h('h1', {}, 'Timers'), h('p', { class: 'muted' }, 'Pending timers are kept per destination queue; choose one.'), chooser, names]
  }
  const prefix = params.get('prefix')
  const peek = params.get('peek')
  const after = params.get('after')
  const [page, counted, peeked, caps] = await Promise.all([
    api<TimerPage>('/api/v1/timers/' + seg(queue) + '?limit=' + PAGE + (after !== null ? '&after=' + seg(after) : '')),
    prefix ? api<{ count: number }>('/api/v1/timers/' + seg(queue) + '?mode=count&prefix=' + seg(prefix)) : Promise.resolve(null),
    peek !== null ? api<Peeked>(timerPath(queue, peek)) : Promise.resolve(null),
    capabilities(),
  ])
  const list = table<TimerRow>([
    { label: 'Timer key', cell: (t) => link(pagePath(queue, { peek: t.timerKey }), t.timerKey) },
    { label: 'Partition', cell: (t) => t.partition },
    { label: 'Due', cell: (t) => time(t.deliverAt) },
    { label: 'Attempts', num: true, cell: (t) => num(t.attempts) },
    { label: 'Last error', cell: (t) => t.lastError || '–' },
    { label: 'Scheduled', cell: (t) => time(t.createdAt) },
    { label: 'Payload', cell: (t) => (t.encrypted ? 'encrypted' : link(pagePath(queue, { peek: t.timerKey }), 'peek')) },
    ...(caps.write ? [{ label: 'Action', cell: (t: TimerRow) => cancelButton(queue, t, 'cancel-timer-' + t.timerKey, navigate) }] : []),
  ], page.rows, after === null ? 'No pending timers on this queue.' : 'No timers after ' + after + '.', (t) => ({ 'data-testid': 'timer-' + t.timerKey }))
  list.setAttribute('data-testid', 'timers')
  const countForm = addressForm('Count keys starting with', 'Count', 'prefix', prefix ?? '', 'timers-prefix', (p) => navigate(pagePath(queue, { prefix: p })))
  return [
    h('h1', {}, 'Timers of ', queue),
    chooser, names,
    peeked ? peekPanel(queue, peeked, caps.write, navigate) : '',
    h('h2', {}, 'Count'),
    countForm,
    counted ? h('p', { 'data-testid': 'timers-count' }, num(counted.count) + ' pending timers with keys starting "' + prefix + '".') : '',
    h('h2', {}, 'Pending timers'),
    h('p', { class: 'muted' }, 'In key order, ' + PAGE + ' a page; a timer leaves the list when it fires.'),
    list,
    h('p', { class: 'pager' },
      after !== null ? link(pagePath(queue), 'First page') : '',
      after !== null && page.nextAfter !== null ? ' · ' : '',
      page.nextAfter !== null ? h('a', { href: pagePath(queue, { after: page.nextAfter }), 'data-nav': true, 'data-testid': 'timers-next' }, 'Next page') : ''),
  ]
}
