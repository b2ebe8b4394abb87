// Window arithmetic of the sink: where a window of createdAt starts and ends. Under the hive
// layout windows restart at every alignment boundary (an hour, a day), so no window straddles one
// and the dt=/hour= of its key holds for every row in it; the legacy layout's windows are a plain
// grid from the epoch. Either way a window is a pure function of an instant, so a re-run after a
// crash picks the very same window (docs/sink.md).

export type Align = 'hour' | 'day' | 'none'

const SPAN_MS: Record<Align, number> = { hour: 3_600_000, day: 86_400_000, none: Infinity }

export interface WindowGrid {
  /** The start of the window holding `ms`: the largest window boundary at or below it. */
  startOf(ms: number): number
  /** The end of the window that starts at `start`. */
  endOf(start: number): number
}

export function windowGrid(windowSeconds: number, align: Align): WindowGrid {
  const length = windowSeconds * 1000
  const span = SPAN_MS[align]
  const spanStart = (ms: number) => (span === Infinity ? 0 : Math.floor(ms / span) * span)
  return {
    startOf(ms) {
      const base = spanStart(ms)
      return base + Math.floor((ms - base) / length) * length
    },
    endOf(start) {
      return Math.min(start + length, span === Infinity ? Infinity : spanStart(start) + span)
    },
  }
}
