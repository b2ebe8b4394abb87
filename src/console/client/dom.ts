// Browser module dom.js: element building and number formatting. Everything reaches the page
// through textContent/attributes, never innerHTML, so queue names and payloads cannot inject markup.
export const DOM_JS = String.raw`
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag)
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value)
    else if (key === 'class') el.className = value
    else el.setAttribute(key, value === true ? '' : String(value))
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue
    el.append(child instanceof Node ? child : String(child))
  }
  return el
}

// The 21 options in the order of the configure documentation; a key this list does not know (a
// newer broker) still shows, after these.
const OPTION_ORDER = ['namespace', 'task', 'leaseTime', 'retryLimit', 'retryDelay', 'deadLetterQueue', 'dlqAfterMaxRetries',
  'delayedProcessing', 'windowBuffer', 'minPopWaitTime', 'dedupWindowSeconds', 'encryptionEnabled', 'retentionEnabled',
  'retentionSeconds', 'completedRetentionSeconds', 'maxWaitTimeSeconds', 'retentionSinkHold', 'retentionSinkHoldMaxSeconds',
  'priority', 'ttl', 'maxSize']

export function orderedOptions(options) {
  const rank = (k) => (OPTION_ORDER.includes(k) ? OPTION_ORDER.indexOf(k) : OPTION_ORDER.length)
  return Object.entries(options).sort(([a], [b]) => rank(a) - rank(b) || (a < b ? -1 : 1))
}

/** An in-app link: main.js intercepts clicks on [data-nav] and routes without a reload. */
export const link = (href, text) => h('a', { href, 'data-nav': true }, text)

/** columns: [{label, cell(row), num?}]; an empty list renders one "none" row; rowAttrs(row) adds attributes to a row. */
export function table(columns, rows, empty = 'none', rowAttrs = () => ({})) {
  const head = h('tr', {}, columns.map((c) => h('th', { class: c.num ? 'num' : null }, c.label)))
  const body = rows.length
    ? rows.map((row) => h('tr', rowAttrs(row), columns.map((c) => h('td', { class: c.num ? 'num' : null }, c.cell(row)))))
    : [h('tr', {}, h('td', { colspan: columns.length, class: 'muted' }, empty))]
  return h('table', {}, h('thead', {}, head), h('tbody', {}, body))
}

export const num = (n) => (n === null || n === undefined ? '–' : Number(n).toLocaleString('en-US'))

/** Bytes in binary units; the exact count is the title, shown on hover. */
export function bytes(n) {
  if (n === null || n === undefined) return '–'
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let v = Number(n)
  let i = 0
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024
    i++
  }
  return h('span', { title: Number(n).toLocaleString('en-US') + ' bytes' }, (i === 0 ? String(v) : v.toFixed(1)) + ' ' + units[i])
}

/** A duration as text (also used inside other text, so a plain string). */
export function seconds(s) {
  if (s === null || s === undefined) return '–'
  if (s < 120) return Math.round(s) + ' s'
  if (s < 7200) return Math.round(s / 60) + ' min'
  return Math.round(s / 3600) + ' h'
}

/** A duration for a table cell: human units, the exact seconds on hover. */
export const duration = (s) => (s === null || s === undefined ? '–' : h('span', { title: Number(s) + ' s' }, seconds(s)))

/** How long ago, in words; "in …" for an instant in the future. */
export function ago(iso, now = Date.now()) {
  const s = (now - new Date(iso).getTime()) / 1000
  if (Math.abs(s) < 5) return 'just now'
  return s < 0 ? 'in ' + seconds(-s) : seconds(s) + ' ago'
}

/** An instant: relative in the cell, the exact local time and ISO value on hover. */
export const time = (iso) => (iso ? h('time', { datetime: iso, title: new Date(iso).toLocaleString() + ' (' + iso + ')' }, ago(iso)) : '–')

/** A table row that behaves as a link: focusable, Enter or a click opens href (main.js). */
export function rowLink(href) {
  return { 'data-href': href, tabindex: 0, class: 'rowlink' }
}

export function statsBadge(statsAge, staleAfter) {
  const stale = statsAge < 0 || statsAge > staleAfter
  const text = statsAge < 0 ? 'stats never reconciled' : 'stats ' + seconds(statsAge) + ' old'
  return h('span', { class: stale ? 'badge stale' : 'badge fresh', 'data-testid': 'stats-age',
    title: stale ? 'pending/processing/retained bytes come from the stats reconciler, which has not run recently' : 'reconciled by the stats lane' },
    stale ? 'stale: ' + text : text)
}

export function errorBox(error) {
  return h('div', { class: 'error', role: 'alert' }, error.status ? error.status + ': ' + error.message : String(error.message || error))
}
`
