// Browser module live.js: the auto-refresh of the current view. The interval is the operator's
// choice (kept in localStorage: a preference, not a secret) and is always shown in the header;
// nothing is fetched while the tab is hidden; a 503 from the broker (overloaded, maintenance of its
// database) doubles the wait up to a cap, or waits what its Retry-After asks, until an answer is good.
export const LIVE_JS = String.raw`
import { h } from './dom.js'

const KEY = 'queen.console.refreshSeconds'
const CHOICES = [0, 2, 5, 15, 60]
const DEFAULT = 5
const BACKOFF_CAP = 120

/**
 * refresh() re-draws the current view and resolves to null or to the error it met; the scheduler
 * owns when it runs. view(live) says whether the view on screen refreshes at all (a form does not).
 */
export function createLive(refresh, slot) {
  const stored = Number(localStorage.getItem(KEY))
  let every = CHOICES.includes(stored) && localStorage.getItem(KEY) !== null ? stored : DEFAULT
  let wait = every
  let viewIsLive = true
  let timer = null
  let reason = ''
  let lastGood = null

  const select = h('select', { 'aria-label': 'Auto-refresh interval', 'data-testid': 'refresh-every' },
    CHOICES.map((s) => h('option', { value: String(s), selected: s === every }, s === 0 ? 'off' : s + ' s')))
  // aria-live without role=status: the page's status line stays the one flash message.
  const text = h('span', { 'data-testid': 'live', 'aria-live': 'polite' })
  slot.replaceChildren(text, h('label', { class: 'live-choice' }, 'every ', select))

  function show() {
    let t
    if (!viewIsLive) t = 'Not refreshing: this page holds a form'
    else if (every === 0) t = 'Auto-refresh off'
    else if (document.hidden) t = 'Paused while the tab is hidden'
    else if (reason) t = reason + '; next try in ' + wait + ' s'
    else t = 'Refreshing every ' + every + ' s'
    if (lastGood) t += ' · updated ' + lastGood.toLocaleTimeString()
    text.textContent = t
    text.title = lastGood ? 'last good answer ' + lastGood.toISOString() : ''
    text.dataset.state = !viewIsLive || every === 0 ? 'off' : document.hidden ? 'paused' : reason ? 'backoff' : 'live'
  }

  function schedule() {
    clearTimeout(timer)
    timer = null
    if (viewIsLive && every > 0 && !document.hidden) timer = setTimeout(tick, wait * 1000)
    show()
  }

  /** Called with the outcome of every draw, whoever started it. */
  function outcome(error) {
    if (error && error.status === 503) {
      // Back off: the broker said it cannot serve now; asking faster would only add load.
      wait = Math.min(BACKOFF_CAP, Math.max(error.retryAfter || 0, Math.max(wait, every || DEFAULT) * 2))
      reason = 'Broker unavailable (503), backing off'
    } else {
      wait = every
      reason = ''
      if (!error) lastGood = new Date()
    }
    schedule()
  }

  async function tick() {
    outcome(await refresh())
  }

  select.addEventListener('change', () => {
    every = Number(select.value)
    localStorage.setItem(KEY, String(every))
    wait = every
    reason = ''
    schedule()
  })
  document.addEventListener('visibilitychange', () => {
    // Back in view: show fresh figures at once rather than after a full interval.
    if (!document.hidden && viewIsLive && every > 0) tick()
    else schedule()
  })

  return {
    outcome,
    view(live) {
      viewIsLive = live
      schedule()
    },
  }
}
`
