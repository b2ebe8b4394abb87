// Element building and number formatting. Everything reaches the page through textContent and
// attributes, never innerHTML, so queue names and payloads cannot inject markup.
import { messageOf, statusOf } from './api.js'

/** What h() draws as a child: text, numbers, nodes and lists of them; null, undefined and false draw nothing. */
export type Child = Node | string | number | null | undefined | false | Child[]

/** An attribute: true is present and empty; null, undefined and false leave it out; a function under on<event> listens. */
export type AttrValue = string | number | boolean | null | undefined | ((event: Event) => unknown)
export type Attrs = Record<string, AttrValue>

function appendAll(el: Element, children: Child[]): void {
  for (const child of children) {
    if (Array.isArray(child)) appendAll(el, child)
    else if (child !== null && child !== undefined && child !== false) el.append(child instanceof Node ? child : String(child))
  }
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag)
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue
    if (typeof value === 'function') el.addEventListener(key.slice(2), value)
    else if (key === 'class') el.className = String(value)
    else el.setAttribute(key, value === true ? '' : String(value))
  }
  appendAll(el, children)
  return el
}

// The 21 options in the order of the configure documentation; a key this list does not know (a
// newer broker) still shows, after these.
const OPTION_ORDER = ['namespace', 'task', 'leaseTime', 'retryLimit', 'retryDelay', 'deadLetterQueue', 'dlqAfterMaxRetries',
  'delayedProcessing', 'windowBuffer', 'minPopWaitTime', 'dedupWindowSeconds', 'encryptionEnabled', 'retentionEnabled',
  'retentionSeconds', 'completedRetentionSeconds', 'maxWaitTimeSeconds', 'retentionSinkHold', 'retentionSinkHoldMaxSeconds',
  'priority', 'ttl', 'maxSize']

export function orderedOptions<V>(options: Record<string, V>): [string, V][] {
  const rank = (k: string) => (OPTION_ORDER.includes(k) ? OPTION_ORDER.indexOf(k) : OPTION_ORDER.length)
  return Object.entries(options).sort(([a], [b]) => rank(a) - rank(b) || (a < b ? -1 : 1))
}

/** Goes to an in-app path without a reload, with message as the next view's status line (main.ts). */
export type Navigate = (path: string, message?: string) => void

/** An in-app link: main.ts intercepts clicks on [data-nav] and routes without a reload. */
export const link = (href: string, text: Child): HTMLAnchorElement => h('a', { href, 'data-nav': true }, text)

export interface Column<Row> {
  label: string
  /** Right-aligned, tabular figures. */
  num?: boolean
  cell: (row: Row) => Child
}

/** An empty list renders one row saying empty; rowAttrs(row) adds attributes to a row. */
export function table<Row>(columns: Column<Row>[], rows: readonly Row[], empty = 'none', rowAttrs: (row: Row) => Attrs = () => ({})): HTMLTableElement {
  const head = h('tr', {}, columns.map((c) => h('th', { class: c.num ? 'num' : null }, c.label)))
  const body = rows.length
    ? rows.map((row) => h('tr', rowAttrs(row), columns.map((c) => h('td', { class: c.num ? 'num' : null }, c.cell(row)))))
    : [h('tr', {}, h('td', { colspan: columns.length, class: 'muted' }, empty))]
  return h('table', {}, h('thead', {}, head), h('tbody', {}, body))
}

/** A count; the API sends int8 figures as numbers or strings, and either reads the same. */
export const num = (n: number | string | null | undefined): string => (n === null || n === undefined ? '–' : Number(n).toLocaleString('en-US'))

/** Bytes in binary units; the exact count is the title, shown on hover. */
export function bytes(n: number | string | null | undefined): HTMLSpanElement | string {
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
export function seconds(s: number | null | undefined): string {
  if (s === null || s === undefined) return '–'
  if (s < 120) return Math.round(s) + ' s'
  if (s < 7200) return Math.round(s / 60) + ' min'
  return Math.round(s / 3600) + ' h'
}

/** A duration for a table cell: human units, the exact seconds on hover. */
export const duration = (s: number | null | undefined): HTMLSpanElement | string =>
  (s === null || s === undefined ? '–' : h('span', { title: Number(s) + ' s' }, seconds(s)))

/** How long ago, in words; "in …" for an instant in the future. */
export function ago(iso: string, now = Date.now()): string {
  const s = (now - new Date(iso).getTime()) / 1000
  if (Math.abs(s) < 5) return 'just now'
  return s < 0 ? 'in ' + seconds(-s) : seconds(s) + ' ago'
}

/** An instant: relative in the cell, the exact local time and ISO value on hover. */
export const time = (iso: string | null | undefined): HTMLTimeElement | string =>
  (iso ? h('time', { datetime: iso, title: new Date(iso).toLocaleString() + ' (' + iso + ')' }, ago(iso)) : '–')

/** A table row that behaves as a link: focusable, Enter or a click opens href (main.ts). */
export function rowLink(href: string): Attrs {
  return { 'data-href': href, tabindex: 0, class: 'rowlink' }
}

export function statsBadge(statsAge: number, staleAfter: number): HTMLSpanElement {
  const stale = statsAge < 0 || statsAge > staleAfter
  const text = statsAge < 0 ? 'stats never reconciled' : 'stats ' + seconds(statsAge) + ' old'
  return h('span', { class: stale ? 'badge stale' : 'badge fresh', 'data-testid': 'stats-age',
    title: stale ? 'pending/processing/retained bytes come from the stats reconciler, which has not run recently' : 'reconciled by the stats lane' },
    stale ? 'stale: ' + text : text)
}

export function errorBox(error: unknown): HTMLDivElement {
  const status = statusOf(error)
  return h('div', { class: 'error', role: 'alert' }, status ? status + ': ' + messageOf(error) : messageOf(error))
}
