// The process's pop waker with every wait recorded (its keys, bound, group and how it ended), so a
// test can tell which long polls a push woke and which lingered without asserting on time.
import { createPopWaker, type PopWaker, type WakeOutcome } from '../../src/pop-waker.js'

export interface RecordedWait {
  keys: string[]
  ms: number
  group: string | undefined
  /** How the wait ended, once it has. */
  outcome?: WakeOutcome
}

export function recordingWaker(): { waker: PopWaker; waits: RecordedWait[] } {
  const inner = createPopWaker()
  const waits: RecordedWait[] = []
  return {
    waits,
    waker: {
      wait(keys, ms, signal, group) {
        const wait: RecordedWait = { keys: [...keys], ms, group }
        waits.push(wait)
        return inner.wait(keys, ms, signal, group).then((outcome) => (wait.outcome = outcome))
      },
      notify: (keys, counts) => inner.notify(keys, counts),
      handOn: (keys, group) => inner.handOn(keys, group),
      close: () => inner.close(),
      parked: (key, group) => inner.parked(key, group),
    },
  }
}

/** Resolves once `waits` holds a wait matching `test` at or after index `from` (throws after 10 s). */
export async function waitedFor(waits: RecordedWait[], from: number, test: (w: RecordedWait) => boolean): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!waits.slice(from).some(test)) {
    if (Date.now() > deadline) throw new Error(`no such wait was recorded: ${JSON.stringify(waits.slice(from))}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

/** A long poll parked on `queue` (any tenant). */
export const parkedOn = (queue: string) => (w: RecordedWait) => w.keys.some((k) => k.endsWith(`|${queue}`))
