// Browser module main.js: the router (History API over /console/... paths, all served the same
// shell, so every view has a URL that can be bookmarked and shared; no token or tenant is ever in
// it), the live refresh of the view on screen, keyboard activation of row links, and the
// connection form that keeps the token and tenant in the session.
export const MAIN_JS = String.raw`
import { loadSettings, session } from './api.js'
import { errorBox, h } from './dom.js'
import { dlqView } from './dlq.js'
import { editView } from './edit.js'
import { groupView, groupsView } from './groups.js'
import { createLive } from './live.js'
import { findView, messageView, partitionView } from './messages.js'
import { placementsView } from './placements.js'
import { queueView } from './queue.js'
import { queuesView } from './queues.js'
import { streamsView } from './streams.js'
import { sinksView } from './sinks.js'
import { systemView } from './system.js'
import { traceNamesView, traceView } from './traces.js'

const main = document.getElementById('main')
const connection = document.getElementById('connection')
let flash = ''

// Each route: draw() builds the view; live says whether it refreshes by itself (a form must not
// be redrawn under the operator's hands).
function route(url) {
  let parts
  try {
    parts = url.pathname.split('/').filter(Boolean).map((p) => decodeURIComponent(p))
  } catch {
    return null
  }
  const live = (draw) => ({ draw, live: true })
  if (parts.length === 0 || (parts[0] === 'console' && (parts.length === 1 || (parts[1] === 'queues' && parts.length === 2)))) return live(() => queuesView())
  if (parts[0] !== 'console') return null
  const [, section, name, action, extra] = parts
  const q = url.searchParams
  if (section === 'queues' && parts.length === 3) return live(() => queueView(name, navigate))
  if (section === 'queues' && parts.length === 4 && action === 'edit') return { draw: () => editView(name, navigate), live: false }
  if (section === 'queues' && parts.length === 4 && action === 'find') return live(() => findView(name, q, navigate))
  if (section === 'queues' && parts.length === 5 && action === 'partitions') return live(() => partitionView(name, extra, q, navigate))
  if (section === 'messages' && parts.length === 4) return live(() => messageView(name, action, navigate))
  if (section === 'dlq' && parts.length === 2) return live(() => dlqView(q, navigate))
  if (section === 'groups' && parts.length === 2) return live(() => groupsView(q))
  if (section === 'groups' && parts.length === 3) return live(() => groupView(name, navigate))
  if (section === 'traces' && parts.length === 2) return live(() => traceNamesView())
  if (section === 'traces' && parts.length === 3) return live(() => traceView(name))
  if (section === 'streams' && parts.length === 2) return live(() => streamsView())
  if (section === 'sinks' && parts.length === 2) return live(() => sinksView())
  if (section === 'system' && parts.length === 2) return live(() => systemView(navigate))
  if (section === 'placements' && parts.length === 2) return live(() => placementsView(navigate))
  return null
}

const keyOf = (el) => (el.dataset.key ? '[data-key="' + CSS.escape(el.dataset.key) + '"]'
  : el.dataset.testid ? '[data-testid="' + CSS.escape(el.dataset.testid) + '"]'
  : el.dataset.href ? '[data-href="' + CSS.escape(el.dataset.href) + '"]' : null)

/** What a redraw must not take from the operator: open payloads, typed values, focus, scroll, the flash line. */
function snapshot() {
  const active = document.activeElement
  return {
    open: [...main.querySelectorAll('details[open][data-key]')].map((d) => d.dataset.key),
    values: [...main.querySelectorAll('input[data-key], select[data-key]')].map((e) => [e.dataset.key, e.value]),
    focus: active && main.contains(active) ? keyOf(active) : null,
    flash: main.querySelector('.flash'),
    y: window.scrollY,
  }
}

function restore(kept) {
  for (const d of main.querySelectorAll('details[data-key]')) if (kept.open.includes(d.dataset.key)) d.open = true
  for (const [key, value] of kept.values) {
    const e = main.querySelector('[data-key="' + CSS.escape(key) + '"]')
    if (e) e.value = value
  }
  if (kept.flash) main.prepend(kept.flash)
  if (kept.focus) main.querySelector(kept.focus)?.focus({ preventScroll: true })
  window.scrollTo(0, kept.y)
}

let drawing = 0

/** Draws the view for the address bar; quiet keeps what is on screen until the new figures arrive. Resolves to the error met, or null. */
async function render({ quiet = false } = {}) {
  const url = new URL(location.href)
  for (const a of document.querySelectorAll('nav a')) {
    const section = a.dataset.section
    a.classList.toggle('active', url.pathname.startsWith(section) || (section === '/console/queues' && (url.pathname === '/' || url.pathname === '/console')))
  }
  const found = route(url)
  const id = ++drawing
  if (!found) {
    live.view(false)
    main.replaceChildren(h('h1', {}, 'Not found'), h('p', {}, 'No console page at ' + url.pathname + '.'))
    return null
  }
  live.view(found.live)
  const note = flash ? h('p', { class: 'flash', role: 'status' }, flash) : null
  flash = ''
  if (!quiet) main.replaceChildren(h('p', { class: 'muted' }, 'Loading…'))
  try {
    const nodes = [note, await found.draw()].flat(Infinity).filter(Boolean)
    if (id !== drawing) return null
    const kept = quiet ? snapshot() : null
    main.replaceChildren(...nodes)
    if (kept) restore(kept)
    return null
  } catch (error) {
    if (id !== drawing) return null
    // A refresh that meets a 503 leaves the last figures on screen; the header says it is backing off.
    if (quiet && error.status === 503 && main.querySelector('h1')) return error
    // 401/403: the token (or the tenant) is missing or refused; open the form to fix it.
    if (error.status === 401 || error.status === 403) connection.open = true
    main.replaceChildren(errorBox(error))
    return error
  }
}

async function refresh() {
  // Someone typing in a field of the view: leave it alone this time round.
  const active = document.activeElement
  if (active && main.contains(active) && ['INPUT', 'SELECT', 'TEXTAREA'].includes(active.tagName)) return null
  return render({ quiet: true })
}

const live = createLive(refresh, document.getElementById('live'))

async function show(options) {
  live.outcome(await render(options))
}

export function navigate(path, message = '') {
  flash = message
  history.pushState(null, '', path)
  show()
}

async function setupConnection() {
  const settings = await loadSettings()
  if (!settings.authEnabled && !settings.tenancyHeader) {
    connection.hidden = true
    return
  }
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
    show()
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
  connection.open = (settings.authEnabled && !session.token()) || (settings.tenancyHeader && !session.tenant())
}

document.addEventListener('click', (event) => {
  if (event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return
  const a = event.target.closest('a[data-nav]')
  if (a) {
    event.preventDefault()
    return navigate(a.getAttribute('href'))
  }
  // A row link: a click anywhere on the row but on its own links, buttons and payload viewers.
  const row = event.target.closest('[data-href]')
  if (row && !event.target.closest('a, button, details, input, select')) navigate(row.dataset.href)
})
document.addEventListener('keydown', (event) => {
  // Rows that open something are focusable (tabindex 0); Enter opens them, as it does a link.
  if (event.key !== 'Enter' || event.target.dataset?.href === undefined) return
  event.preventDefault()
  navigate(event.target.dataset.href)
})
window.addEventListener('popstate', () => show())
document.getElementById('refresh').addEventListener('click', () => show({ quiet: true }))

await setupConnection()
await show()
`
