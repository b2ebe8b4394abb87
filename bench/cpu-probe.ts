// How fast one core of this machine is right now: a fixed single-thread workload (JSON round trips
// and a hash), timed. On a shared or virtual machine the same core can be slower at one time than
// at another (a busy host steals nothing visible from inside, it just runs slower), and the cell's
// points then differ for reasons outside the broker: the probe beside each point shows it.
import { createHash } from 'node:crypto'

const DOCUMENT = {
  items: Array.from({ length: 50 }, (_, i) => ({ queue: 'orders', partition: `p${i}`, payload: { n: i, text: 'x'.repeat(200) } })),
}

function workload(): string {
  const hash = createHash('sha256')
  for (let i = 0; i < 4000; i++) hash.update((JSON.parse(JSON.stringify(DOCUMENT)) as typeof DOCUMENT).items[i % 50]!.partition)
  return hash.digest('hex')
}

/** The fastest of three timed runs of the workload, in ms (~0.2 s each on a quiet 2-core VM). */
export function cpuProbeMs(): number {
  workload() // compiled and warm
  let fastest = Infinity
  for (let run = 0; run < 3; run++) {
    const started = performance.now()
    workload()
    fastest = Math.min(fastest, performance.now() - started)
  }
  return Math.round(fastest)
}
