// Object names: a pure function of (sink, queue, partition, window, first offset), so a re-run
// after a crash writes the very same names and replaces what a crashed run left (docs/sink.md).
//   <prefix><sink>/<queue>/data/<partition>/<window start>/<first offset, 20 digits>.ndjson.gz
//   <prefix><sink>/<queue>/manifests/<window end>.json
// Names are percent-encoded segment by segment (no name can add a level), instants are compact
// UTC (sortable, and legal in every file system), offsets zero-padded so lexical order is offset order.

const segment = (name: string) => encodeURIComponent(name)

/** 2026-12-05T13:15:00.000Z -> 20261205T131500.000Z */
export const compactInstant = (iso: string) => iso.replace(/[-:]/g, '')

export function normalisePrefix(prefix: string): string {
  const trimmed = prefix.replace(/^\/+/, '')
  return trimmed === '' || trimmed.endsWith('/') ? trimmed : `${trimmed}/`
}

export interface Layout {
  queueRoot: string
  dataKey(partition: string, windowStart: string, firstOffset: number): string
  manifestKey(windowEnd: string): string
  manifestPrefix: string
}

export function layout(prefix: string, sink: string, queue: string): Layout {
  const queueRoot = `${normalisePrefix(prefix)}${segment(sink)}/${segment(queue)}/`
  return {
    queueRoot,
    dataKey: (partition, windowStart, firstOffset) =>
      `${queueRoot}data/${segment(partition)}/${compactInstant(windowStart)}/${String(firstOffset).padStart(20, '0')}.ndjson.gz`,
    manifestKey: (windowEnd) => `${queueRoot}manifests/${compactInstant(windowEnd)}.json`,
    manifestPrefix: `${queueRoot}manifests/`,
  }
}
