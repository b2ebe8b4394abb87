// A consumer group's lag over the last hour, sampled by the console itself. The broker stores no
// per-group lag history (the stats lane keeps per-queue gauges only), so each draw of a group page
// records one sample per queue in sessionStorage: the chart survives navigation within the tab
// and is gone with it, and never grows beyond an hour.
const HOUR_MS = 3600_000
// Redraws closer than this that found the same lag (a click right after a timed refresh) add no
// point; a change is always kept, however soon, so a seek shows as the drop it is.
const MIN_GAP_MS = 1000

/** One draw's totals: when, and the group's lag per queue. */
interface Sample {
  t: number
  lag: Record<string, number>
}

export interface LagHistory {
  times: string[]
  /** One value per sample; null where the group was not on the queue. */
  values: (queue: string) => (number | null)[]
}

/** Records totals ({queue: lag}) now and returns the last hour. */
export function lagSamples(group: string, totals: Record<string, number>, now = Date.now()): LagHistory {
  const key = 'queen.console.lag.' + group
  let samples: Sample[] = []
  try {
    samples = JSON.parse(sessionStorage.getItem(key) || '[]') as Sample[]
  } catch {
    samples = []
  }
  samples = samples.filter((s) => now - s.t <= HOUR_MS)
  const last = samples[samples.length - 1]
  if (!last || now - last.t >= MIN_GAP_MS || JSON.stringify(last.lag) !== JSON.stringify(totals)) samples.push({ t: now, lag: totals })
  sessionStorage.setItem(key, JSON.stringify(samples))
  return {
    times: samples.map((s) => new Date(s.t).toISOString()),
    // A queue the group was not on at a sample is a gap, not a zero.
    values: (queue) => samples.map((s) => (queue in s.lag ? s.lag[queue] ?? null : null)),
  }
}
