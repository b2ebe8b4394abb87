// Which queues are encrypted, as the database last reported (tenant|queue → encryptionEnabled), so
// a push can encrypt before its one round trip. The map is a hint, never an authority: the push
// procedure compares each item's `enc` with the queue's flag under its locks and refuses a mismatch
// (QMENC), after which src/messages/encode.ts corrects the map and re-encodes once. One map per app
// (per process on Node, per isolate on Workers); it holds no socket, so it is safe in workerd, and
// it only saves the second round trip on later pushes.

export type QueueFlag = { name: string; encryptionEnabled: boolean }

export interface EncryptionFlags {
  /** The queue's flag as last reported; unknown means clear. */
  cached(tenant: string, queue: string): boolean
  remember(tenant: string, queues: readonly QueueFlag[] | null | undefined): void
}

const FLAG_CAP = 10_000

export function createEncryptionFlags(): EncryptionFlags {
  const flags = new Map<string, boolean>()
  return {
    cached(tenant, queue) {
      return flags.get(`${tenant}|${queue}`) ?? false
    },
    remember(tenant, queues) {
      for (const q of queues ?? []) {
        if (flags.size >= FLAG_CAP && !flags.has(`${tenant}|${q.name}`)) flags.clear()
        flags.set(`${tenant}|${q.name}`, q.encryptionEnabled)
      }
    },
  }
}
