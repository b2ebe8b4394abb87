// The body of the two partition-log reads, /partitions/changed and /fetch (its read half): a list
// of per-queue or per-partition entries, bounded so one call stays one bounded procedure call.
import { z } from 'zod'

/** At most 100 entries per call. */
export const MAX_ENTRIES = 100

/** `{entries: [...]}` of at most MAX_ENTRIES. */
export const entriesBody = <E extends z.ZodType>(entry: E) =>
  z.object({ entries: z.array(entry, { error: 'must be an array' }).max(MAX_ENTRIES, `at most ${MAX_ENTRIES} entries`) })
