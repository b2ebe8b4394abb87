// The auto-refresh of the current view. The interval is the operator's choice (kept in
// localStorage: a preference, not a secret) and the header always says what the refresh is doing,
// naming the interval once: the selector beside it reads "change" rather than repeating the value.
// Nothing is fetched while the tab is hidden; a 503 from the broker (overloaded, maintenance of its
// database) doubles the wait up to a cap, or waits what its Retry-After asks, until an answer is good.
import { ApiError, statusOf } from './api.js'
import { h } from './dom.js'

const KEY = 'queen.console.refreshSeconds'
const CHOICES = [0, 2, 5, 15, 60]
const DEFAULT = 5
const BACKOFF_CAP = 120

export interface Live {
  /** Reports the outcome of a draw, whoever started it: null, or the error it met. */
  outcome(error: unknown): void
  /** Whether the view on screen refreshes at all (a form does not). */
  view(live: boolean): void
}

const choiceLabel = (s: number) => (s === 0 ? 'off' : s + ' s')

/**
 * refresh() re-draws the current view and resolves to null or to the error it met; the scheduler
 * owns when it runs. slot is the header element that shows the state and the selector.
 */
export function createLive(refresh: () => Promise<unknown>, slot: HTMLElement): Live {
  const stored = Number(localStorage.getItem(KEY))
  let every = CHOICES.includes(stored) && localStorage.getItem(KEY) !== null ? stored : DEFAULT
  let wait = every
  let viewIsLive = true
  let timer: ReturnType<typeof setTimeout> | undefined
  let reason = ''
  let lastGood: Date | null = null

  // The sentence beside it already names the interval, so the selector is a menu: its shown
  // choice is always "change", and the current interval is marked in the list.
  const choices = CHOICES.map((s) => h('option', { value: String(s) }, choiceLabel(s)))
  const select = h('select', { 'aria-label': 'Change the auto-refresh interval', 'data-testid': 'refresh-every' },
    h('option', { value: '', hidden: true, selected: true }, 'change'), choices)
  // aria-live without role=status: the page's status line stays the one flash message.
  const text = h('span', { 'data-testid': 'live', 'aria-live': 'polite' })
  slot.replaceChildren(text, h('label', { class: 'live-choice' }, select))

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
    CHOICES.forEach((s, i) => {
      choices[i]!.textContent = choiceLabel(s) + (s === every ? ' (current)' : '')
    })
  }

  function schedule() {
    clearTimeout(timer)
    timer = undefined
    if (viewIsLive && every > 0 && !document.hidden) timer = setTimeout(tick, wait * 1000)
    show()
  }

  function outcome(error: unknown) {
    if (statusOf(error) === 503) {
      // Back off: the broker said it cannot serve now; asking faster would only add load.
      const retryAfter = error instanceof ApiError ? error.retryAfter : null
      wait = Math.min(BACKOFF_CAP, Math.max(retryAfter || 0, Math.max(wait, every || DEFAULT) * 2))
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
    // Back to "change": the sentence beside it now says the new interval.
    select.value = ''
    localStorage.setItem(KEY, String(every))
    wait = every
    reason = ''
    schedule()
  })
  document.addEventListener('visibilitychange', () => {
    // Back in view: show fresh figures at once rather than after a full interval.
    if (!document.hidden && viewIsLive && every > 0) void tick()
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
