// Browser module main.js: the router (History API over /console/... paths, all served the same
// shell), the navigation bar and the connection form that keeps the token and tenant in the session.
export const MAIN_JS = String.raw`
import { loadSettings, session } from './api.js'
import { errorBox, h } from './dom.js'
import { dlqView } from './dlq.js'
import { editView } from './edit.js'
import { groupView, groupsView } from './groups.js'
import { queueView } from './queue.js'
import { queuesView } from './queues.js'
import { streamsView } from './streams.js'
import { sinksView } from './sinks.js'

const main = document.getElementById('main')
const connection = document.getElementById('connection')
let flash = ''

function route(url) {
  let parts
  try {
    parts = url.pathname.split('/').filter(Boolean).map((p) => decodeURIComponent(p))
  } catch {
    return null
  }
  if (parts.length === 0 || (parts[0] === 'console' && (parts.length === 1 || (parts[1] === 'queues' && parts.length === 2)))) return () => queuesView()
  if (parts[0] !== 'console') return null
  const [, section, name, action] = parts
  if (section === 'queues' && parts.length === 3) return () => queueView(name, navigate)
  if (section === 'queues' && parts.length === 4 && action === 'edit') return () => editView(name, navigate)
  if (section === 'dlq' && parts.length === 2) return () => dlqView(url.searchParams, navigate)
  if (section === 'groups' && parts.length === 2) return () => groupsView()
  if (section === 'groups' && parts.length === 3) return () => groupView(name)
  if (section === 'streams' && parts.length === 2) return () => streamsView()
  if (section === 'sinks' && parts.length === 2) return () => sinksView()
  return null
}

async function render() {
  const url = new URL(location.href)
  for (const a of document.querySelectorAll('nav a')) {
    const section = a.dataset.section
    a.classList.toggle('active', url.pathname.startsWith(section) || (section === '/console/queues' && (url.pathname === '/' || url.pathname === '/console')))
  }
  const view = route(url)
  const note = flash ? h('p', { class: 'flash', role: 'status' }, flash) : null
  flash = ''
  main.replaceChildren(h('p', { class: 'muted' }, 'Loading…'))
  if (!view) return main.replaceChildren(h('h1', {}, 'Not found'), h('p', {}, 'No console page at ' + url.pathname + '.'))
  try {
    main.replaceChildren(...[note, await view()].flat().filter(Boolean))
  } catch (error) {
    // 401/403: the token (or the tenant) is missing or refused; open the form to fix it.
    if (error.status === 401 || error.status === 403) connection.open = true
    main.replaceChildren(errorBox(error))
  }
}

export function navigate(path, message = '') {
  flash = message
  history.pushState(null, '', path)
  render()
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
    render()
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
  const a = event.target.closest('a[data-nav]')
  if (!a || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return
  event.preventDefault()
  navigate(a.getAttribute('href'))
})
window.addEventListener('popstate', render)
document.getElementById('refresh').addEventListener('click', () => render())

await setupConnection()
await render()
`
