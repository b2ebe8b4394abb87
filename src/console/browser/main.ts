// The console's entry: the router (History API over /console/... paths, all served the same
// shell, so every view has a URL that can be bookmarked and shared; no token or tenant is ever in
// it), the live refresh of the view on screen, keyboard activation of row links, and the
// connection form that keeps the token and tenant in the session. A view is framed at once (its
// title, and the broker calls it is waiting for) and filled in when its figures arrive.
import { loadSettings, session, statusOf, watchCalls } from './api.js'
import { dlqView } from './dlq.js'
import { errorBox, h, type Child } from './dom.js'
import { editView } from './edit.js'
import { ephemeralView } from './ephemeral.js'
import { groupView, groupsView } from './groups.js'
import { createLive } from './live.js'
import { findView, messageView, partitionView } from './messages.js'
import { kvView } from './kv.js'
import { placementsView } from './placements.js'
import { queueView } from './queue.js'
import { queuesView } from './queues.js'
import { sinksView } from './sinks.js'
import { streamsView } from './streams.js'
import { systemView } from './system.js'
import { timersView } from './timers.js'
import { traceNamesView, traceView } from './traces.js'
import { workloadView } from './workload.js'

/** An element of the shell (shell.ts), which always draws these. */
function shellElement<E extends HTMLElement>(id: string): E {
  const el = document.getElementById(id)
  if (!el) throw new Error('the console shell has no #' + id)
  return el as E
}

const main = shellElement('main')
const connection = shellElement<HTMLDetailsElement>('connection')
let flash = ''

interface Route {
  /** What the view's heading will say, known from the path before any call. */
  title: Child
  draw: () => Promise<Child[]>
  /** Whether it refreshes by itself: a form must not be redrawn under the operator's hands. */
  live: boolean
}

function route(url: URL): Route | null {
  let parts: string[]
  try {
    parts = url.pathname.split('/').filter(Boolean).map((p) => decodeURIComponent(p))
  } catch {
    return null
  }
  const liveView = (title: Child, draw: () => Promise<Child[]>): Route => ({ title, draw, live: true })
  if (parts.length === 0 || (parts[0] === 'console' && (parts.length === 1 || (parts[1] === 'queues' && parts.length === 2)))) return liveView('Queues', () => queuesView())
  if (parts[0] !== 'console') return null
  // Each view below checks parts.length first, so the names it uses are present.
  const [, section, name = '', action = '', extra = ''] = parts
  const q = url.searchParams
  if (section === 'queues' && parts.length === 3) return liveView(['Queue ', name], () => queueView(name, navigate))
  if (section === 'queues' && parts.length === 4 && action === 'edit') return { title: ['Edit options of ', name], draw: () => editView(name, navigate), live: false }
  if (section === 'queues' && parts.length === 4 && action === 'find') return liveView(['Find in ', name], () => findView(name, q, navigate))
  if (section === 'queues' && parts.length === 5 && action === 'partitions') return liveView(['Messages of ', name, ' / ', extra], () => partitionView(name, extra, q, navigate))
  if (section === 'messages' && parts.length === 4) return liveView(['Message ', action], () => messageView(name, action, navigate))
  if (section === 'dlq' && parts.length === 2) return liveView(['Dead letters', q.get('queue') !== null ? ' of ' + q.get('queue') : ''], () => dlqView(q, navigate))
  if (section === 'workload' && parts.length === 2) return liveView('Workload', () => workloadView(q))
  if (section === 'groups' && parts.length === 2) return liveView('Consumer groups', () => groupsView(q))
  if (section === 'groups' && parts.length === 3) return liveView(['Consumer group ', name], () => groupView(name, navigate))
  if (section === 'traces' && parts.length === 2) return liveView('Traces', () => traceNamesView())
  if (section === 'traces' && parts.length === 3) return liveView(['Trace ', name], () => traceView(name))
  if (section === 'streams' && parts.length === 2) return liveView('Streams', () => streamsView())
  if (section === 'sinks' && parts.length === 2) return liveView('Archive sinks', () => sinksView())
  if (section === 'ephemeral' && parts.length === 2) return liveView('Ephemeral queues', () => ephemeralView())
  if (section === 'kv' && parts.length === 2) return liveView(['Key/value store', q.get('namespace') !== null ? ' / ' + q.get('namespace') : ''], () => kvView(q))
  if (section === 'timers' && parts.length === 2) return liveView(['Timers', q.get('queue') !== null ? ' of ' + q.get('queue') : ''], () => timersView(q, navigate))
  if (section === 'system' && parts.length === 2) return liveView('System', () => systemView(navigate))
  if (section === 'placements' && parts.length === 2) return liveView('Placements', () => placementsView(navigate))
  return null
}

const keyOf = (el: HTMLElement) => (el.dataset.key ? '[data-key="' + CSS.escape(el.dataset.key) + '"]'
  : el.dataset.testid ? '[data-testid="' + CSS.escape(el.dataset.testid) + '"]'
  : el.dataset.href ? '[data-href="' + CSS.escape(el.dataset.href) + '"]' : null)

/** What a redraw must not take from the operator. */
interface Kept {
  open: string[]
  values: [string, string][]
  focus: string | null
  flash: Element | null
  y: number
}

/** What a redraw must not take from the operator: open payloads, typed values, focus, scroll, the flash line. */
function snapshot(): Kept {
  const active = document.activeElement
  return {
    open: [...main.querySelectorAll<HTMLDetailsElement>('details[open][data-key]')].map((d) => d.dataset.key ?? ''),
    values: [...main.querySelectorAll<HTMLInputElement | HTMLSelectElement>('input[data-key], select[data-key]')].map((e) => [e.dataset.key ?? '', e.value]),
    focus: active instanceof HTMLElement && main.contains(active) ? keyOf(active) : null,
    flash: main.querySelector('.flash'),
    y: window.scrollY,
  }
}

function restore(kept: Kept) {
  for (const d of main.querySelectorAll<HTMLDetailsElement>('details[data-key]')) if (kept.open.includes(d.dataset.key ?? '')) d.open = true
  for (const [key, value] of kept.values) {
    const e = main.querySelector<HTMLInputElement | HTMLSelectElement>('[data-key="' + CSS.escape(key) + '"]')
    if (e) e.value = value
  }
  if (kept.flash) main.prepend(kept.flash)
  if (kept.focus) main.querySelector<HTMLElement>(kept.focus)?.focus({ preventScroll: true })
  window.scrollTo(0, kept.y)
}

// While a frame is on screen its waiting line follows the calls in flight; anything that replaces
// the frame stops that.
let stopWaiting = () => {}

function fill(...nodes: (Node | string)[]) {
  stopWaiting()
  stopWaiting = () => {}
  main.replaceChildren(...nodes)
}

/** The view's heading and what it is waiting for, drawn before any answer arrives. */
function frame(title: Child, note: Node | null) {
  const waiting = h('p', { class: 'muted', 'data-testid': 'waiting', 'aria-busy': 'true' })
  fill(...[note, h('h1', {}, title), waiting].filter((n) => n !== null))
  stopWaiting = watchCalls((calls) => {
    waiting.textContent = calls.length ? 'Waiting for the broker: ' + calls.join(' · ') : 'Drawing the page…'
  })
}

let drawing = 0

/** Draws the view for the address bar; quiet keeps what is on screen until the new figures arrive. Resolves to the error met, or null. */
async function render({ quiet = false } = {}): Promise<unknown> {
  const url = new URL(location.href)
  for (const a of document.querySelectorAll<HTMLAnchorElement>('nav a')) {
    const section = a.dataset.section ?? ''
    a.classList.toggle('active', url.pathname.startsWith(section) || (section === '/console/queues' && (url.pathname === '/' || url.pathname === '/console')))
  }
  const found = route(url)
  const id = ++drawing
  if (!found) {
    live.view(false)
    fill(h('h1', {}, 'Not found'), h('p', {}, 'No console page at ' + url.pathname + '.'))
    return null
  }
  live.view(found.live)
  const note = flash ? h('p', { class: 'flash', role: 'status' }, flash) : null
  flash = ''
  if (!quiet) frame(found.title, note)
  try {
    const nodes = [note, await found.draw()].flat(Infinity as 1).filter((n): n is Node | string | number => n !== null && n !== undefined && n !== false)
    if (id !== drawing) return null
    const kept = quiet ? snapshot() : null
    fill(...nodes.map((n) => (typeof n === 'number' ? String(n) : n)))
    if (kept) restore(kept)
    return null
  } catch (error) {
    if (id !== drawing) return null
    // A refresh that meets a 503 leaves the last figures on screen; the header says it is backing off.
    if (quiet && statusOf(error) === 503 && main.querySelector('h1')) return error
    // 401/403: the token (or the tenant) is missing or refused; open the form to fix it.
    const status = statusOf(error)
    if (status === 401 || status === 403) connection.open = true
    fill(errorBox(error))
    return error
  }
}

function refresh(): Promise<unknown> {
  // Someone typing in a field of the view: leave it alone this time round.
  const active = document.activeElement
  if (active && main.contains(active) && ['INPUT', 'SELECT', 'TEXTAREA'].includes(active.tagName)) return Promise.resolve(null)
  return render({ quiet: true })
}

const live = createLive(refresh, shellElement('live'))

async function show(options?: { quiet?: boolean }) {
  live.outcome(await render(options))
}

function navigate(path: string, message = '') {
  flash = message
  history.pushState(null, '', path)
  void show()
}

// The shell draws the connection form hidden: whether there is one to show is in the settings.
async function setupConnection() {
  const settings = await loadSettings()
  if (!settings.authEnabled && !settings.tenancyHeader) return
  const token = h('input', { type: 'password', name: 'token', autocomplete: 'off', placeholder: 'bearer token', 'data-testid': 'token' })
  const tenant = h('input', { type: 'text', name: 'tenant', placeholder: 'tenant', 'data-testid': 'tenant' })
  token.value = session.token()
  tenant.value = session.tenant()
  // method=post: a form that ever submitted natively must not put the token in the query string.
  const form = h('form', { method: 'post', class: 'connect' },
    settings.authEnabled ? h('label', {}, 'Token ', token) : null,
    settings.tenancyHeader ? h('label', {}, 'Tenant (' + settings.tenancyHeader + ') ', tenant) : null,
    h('button', { type: 'submit' }, 'Use'))
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    session.save(settings.authEnabled ? token.value.trim() : '', settings.tenancyHeader ? tenant.value.trim() : '')
    connection.open = false
    summary()
    void show()
  })
  const label = h('span', {})
  const summary = () => {
    const bits = []
    if (settings.authEnabled) bits.push(session.token() ? 'token set' : 'no token')
    if (settings.tenancyHeader) bits.push('tenant ' + (session.tenant() || '(none)'))
    label.textContent = 'Connection: ' + bits.join(', ')
  }
  summary()
  connection.replaceChildren(h('summary', {}, label), form)
  connection.hidden = false
  connection.open = (settings.authEnabled && !session.token()) || (settings.tenancyHeader !== null && !session.tenant())
}

document.addEventListener('click', (event) => {
  if (event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return
  if (!(event.target instanceof Element)) return
  const a = event.target.closest('a[data-nav]')
  if (a) {
    event.preventDefault()
    return navigate(a.getAttribute('href') ?? '')
  }
  // A row link: a click anywhere on the row but on its own links, buttons and payload viewers.
  const row = event.target.closest<HTMLElement>('[data-href]')
  if (row && !event.target.closest('a, button, details, input, select')) navigate(row.dataset.href ?? '')
})
document.addEventListener('keydown', (event) => {
  // Rows that open something are focusable (tabindex 0); Enter opens them, as it does a link.
  if (event.key !== 'Enter' || !(event.target instanceof HTMLElement) || event.target.dataset.href === undefined) return
  event.preventDefault()
  navigate(event.target.dataset.href)
})
window.addEventListener('popstate', () => void show())
shellElement('refresh').addEventListener('click', () => void show({ quiet: true }))

// The frame is drawn at once; the connection form follows when the settings arrive.
await Promise.all([setupConnection(), show()])
