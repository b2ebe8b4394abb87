// The last hour of one queue (or all of them) as two small inline SVG line charts, drawn from the
// per-minute counters of GET /api/v1/status/analytics?interval=minute; lineChart() also draws the
// group page's sampled lag.
import { api, seg } from './api.js'
import { h, num } from './dom.js'

const SVG = 'http://www.w3.org/2000/svg'
const W = 600
const H = 140
const PAD = { left: 48, right: 8, top: 10, bottom: 20 }

/** One line: null is a minute nobody measured. cls picks its colour in the stylesheet. */
export interface Series {
  label: string
  cls: string
  values: (number | null)[]
}

/** GET /api/v1/status/analytics?interval=minute: one point per minute of the last hour. */
interface Analytics {
  series: { timestamp: string; pending: number | null; ingested: number | null; processed: number | null }[]
}

function s(tag: string, attrs: Record<string, string | number>, ...children: (Node | string | number)[]): SVGElement {
  const el = document.createElementNS(SVG, tag)
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v))
  for (const c of children) el.append(c instanceof Node ? c : document.createTextNode(String(c)))
  return el
}

export function lineChart(title: string, times: string[], lines: Series[]): HTMLElement {
  const max = Math.max(1, ...lines.flatMap((l) => l.values.filter((v) => v !== null)))
  const x = (i: number) => PAD.left + (i * (W - PAD.left - PAD.right)) / Math.max(1, times.length - 1)
  const y = (v: number) => PAD.top + (H - PAD.top - PAD.bottom) * (1 - v / max)
  const svg = s('svg', { viewBox: '0 0 ' + W + ' ' + H, class: 'chart', role: 'img', 'aria-label': title })
  // Counts are integers: a middle tick that rounds onto an end (max 1) would repeat a label.
  for (const v of [...new Set([0, Math.round(max / 2), max])]) {
    svg.append(s('line', { x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v), class: 'grid' }))
    svg.append(s('text', { x: PAD.left - 4, y: y(v) + 4, 'text-anchor': 'end', class: 'tick' }, num(Math.round(v))))
  }
  const label = (iso: string) => new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
  const first = times[0]
  const last = times[times.length - 1]
  if (first !== undefined && last !== undefined) {
    svg.append(s('text', { x: PAD.left, y: H - 4, class: 'tick' }, label(first)))
    svg.append(s('text', { x: W - PAD.right, y: H - 4, 'text-anchor': 'end', class: 'tick' }, label(last)))
  }
  for (const l of lines) {
    // A null is a minute nobody measured (the stats lane did not run): the line breaks there
    // instead of pretending it was zero.
    const d = l.values
      .map((v, i) => (v === null ? '' : (i && l.values[i - 1] !== null ? 'L' : 'M') + x(i).toFixed(1) + ' ' + y(v).toFixed(1)))
      .filter((part) => part !== '')
      .join(' ')
    // The plotted numbers ride along on the path, for a reader (or a test) that wants the values.
    svg.append(s('path', { d, class: 'line ' + l.cls, 'data-series': l.label, 'data-values': JSON.stringify(l.values) }))
    // A measured minute between two unmeasured ones has no segment to draw: mark it with a dot.
    l.values.forEach((v, i) => {
      if (v !== null && (l.values[i - 1] ?? null) === null && (l.values[i + 1] ?? null) === null) {
        svg.append(s('circle', { cx: x(i).toFixed(1), cy: y(v).toFixed(1), r: 3, class: 'dot ' + l.cls }))
      }
    })
  }
  const legend = h('div', { class: 'legend' }, lines.map((l) => h('span', { class: 'key ' + l.cls }, l.label)))
  return h('figure', { class: 'chart-box' }, h('figcaption', {}, title), legend, svg)
}

/** Fetches the hour and returns the charts; queue undefined means every queue of the tenant. */
export async function hourCharts(queue: string | undefined): Promise<HTMLDivElement> {
  const query = '/api/v1/status/analytics?interval=minute' + (queue === undefined ? '' : '&queue=' + seg(queue))
  const { series } = await api<Analytics>(query)
  const times = series.map((p) => p.timestamp)
  return h('div', { class: 'charts', 'data-testid': 'charts' },
    // pending is the gauge the stats lane records each minute (null where it recorded none).
    lineChart('Pending, last hour', times, [{ label: 'pending', cls: 'pending', values: series.map((p) => p.pending) }]),
    lineChart('Throughput per minute, last hour', times, [
      { label: 'ingested', cls: 'ingested', values: series.map((p) => p.ingested) },
      { label: 'processed', cls: 'processed', values: series.map((p) => p.processed) },
    ]))
}
