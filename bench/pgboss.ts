// pg-boss doing the equivalent work: send (send for batch 1, insert for larger batches) and
// fetch + complete. pg-boss is a library, so it runs in this process with a pool as large as the
// concurrency; its supervisor and scheduler are off so only the measured calls reach the database.
import PgBoss from 'pg-boss'
import { closedLoop, type LoopResult } from './lib.js'
import { smallPayload } from './queen.js'

type Boss = InstanceType<typeof PgBoss>

export async function bossStart(url: string, concurrency: number): Promise<Boss> {
  const boss = new PgBoss({ connectionString: url, max: concurrency, schema: 'pgboss', supervise: false, schedule: false, application_name: 'bench-pgboss' } as never)
  boss.on('error', (error: unknown) => console.error(`  pg-boss: ${String(error)}`))
  await boss.start()
  return boss
}

export async function bossQueue(boss: Boss, name: string): Promise<void> {
  await boss.createQueue(name)
}

export async function bossSendLoad(boss: Boss, queue: string, batch: number, payload: (n: number) => unknown, timing: { concurrency: number; warmupMs: number; durationMs: number }): Promise<LoopResult> {
  let n = 0
  return closedLoop({
    ...timing,
    op: async () => {
      if (batch === 1) await boss.send(queue, payload(n++) as object)
      else await boss.insert(Array.from({ length: batch }, () => ({ name: queue, data: payload(n++) as object })))
      return batch
    },
  })
}

export async function bossFill(boss: Boss, queue: string, count: number): Promise<void> {
  for (let done = 0; done < count; done += 1000) {
    await boss.insert(Array.from({ length: 1000 }, (_, i) => ({ name: queue, data: smallPayload(done + i) })))
  }
}

export async function bossFetchCompleteLoad(boss: Boss, queue: string, batch: number, timing: { concurrency: number; warmupMs: number; durationMs: number }): Promise<LoopResult> {
  let empties = 0
  return closedLoop({
    ...timing,
    op: async () => {
      const jobs = await boss.fetch(queue, { batchSize: batch })
      if (!jobs || jobs.length === 0) {
        empties++
        return 'empty'
      }
      empties = 0
      await boss.complete(queue, jobs.map((j: { id: string }) => j.id))
      return jobs.length
    },
    isDone: () => empties > timing.concurrency * 3,
  })
}
