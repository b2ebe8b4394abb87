// Object names of the hive layout, which DuckDB, Athena and Spark read as they are:
//   <prefix>[tenant=<t>/]queue=<q>/dt=<yyyy-mm-dd>/hour=<hh>/w-<start µs>-<end µs>-<part>.<ext>
//   ... per-partition windows: w-<start µs>-<end µs>-p-<partition>-<first offset>-<last offset>.<ext>
//   <prefix>_queen/[tenant=<t>/]queue=<q>/windows/<end µs>.json      the window's manifest
//   <prefix>_queen/[tenant=<t>/]queue=<q>/checkpoint/<end µs>.json   next offset per partition
// Every name is a function of the window and its rows alone (no clock, no attempt number), so a
// retried window overwrites the same keys with the same bytes. dt=/hour= come from the window's
// start; windows never straddle the alignment boundary, so they hold for every row (align=none:
// where the window starts). _queen/ is not a key=value level, so a reader's glob over
// queue=*/dt=*/... never meets the sidecars. Instants are microseconds padded to 16 digits and
// offsets to 12 (as Queen's sink names them), so lexical order is window and offset order.
import { normalisePrefix } from './layout.js'
import type { Align } from './windows.js'

/** Everything outside [A-Za-z0-9._-] percent-encoded in uppercase hex, so no name can add a level or a `=`. */
export function escapeName(name: string): string {
  return Array.from(new TextEncoder().encode(name), (byte) => {
    const c = String.fromCharCode(byte)
    return /[A-Za-z0-9._-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }).join('')
}

const micros = (ms: number) => String(BigInt(ms) * 1000n).padStart(16, '0')

export interface HiveLayout {
  /** Where the queue's objects live: the directory a reader points at, holding dt=... */
  queueRoot: string
  dataKey(args: { startMs: number; endMs: number; extension: string; part: number } | { startMs: number; endMs: number; extension: string; partition: string; firstOffset: number; lastOffset: number }): string
  manifestKey(windowEnd: string): string
  checkpointKey(windowEnd: string): string
  manifestPrefix: string
}

export function hiveLayout(args: { prefix: string; tenant: string; queue: string; align: Align }): HiveLayout {
  const base = normalisePrefix(args.prefix)
  const scope = `${args.tenant === '' ? '' : `tenant=${escapeName(args.tenant)}/`}queue=${escapeName(args.queue)}/`
  const sidecars = `${base}_queen/${scope}`
  return {
    queueRoot: `${base}${scope}`,
    dataKey(key) {
      const start = new Date(key.startMs).toISOString()
      const bucket = `dt=${start.slice(0, 10)}/${args.align === 'day' ? '' : `hour=${start.slice(11, 13)}/`}`
      const window = `w-${micros(key.startMs)}-${micros(key.endMs)}`
      const tail =
        'partition' in key
          ? `-p-${escapeName(key.partition)}-${String(key.firstOffset).padStart(12, '0')}-${String(key.lastOffset).padStart(12, '0')}`
          : `-${String(key.part).padStart(4, '0')}`
      return `${base}${scope}${bucket}${window}${tail}.${key.extension}`
    },
    manifestKey: (windowEnd) => `${sidecars}windows/${micros(Date.parse(windowEnd))}.json`,
    checkpointKey: (windowEnd) => `${sidecars}checkpoint/${micros(Date.parse(windowEnd))}.json`,
    manifestPrefix: `${sidecars}windows/`,
  }
}
