// The 21 options of a queue (docs/options.md), spelled as configure parses them and as the detail
// route echoes them, with the JSON type each column accepts. sql/procedures/012_configure.sql
// holds the column mapping and defaults; a test checks both lists name the same keys.
import { z } from 'zod'

const INT32 = z.number().int().min(-2147483648).max(2147483647)

// Each kind is what a value must be for its column's cast to succeed (design decision 29: anything
// else is a malformed body, 400). Sink-hold options are 'any': the procedure refuses bad ones
// itself, with the `invalid` marker naming the option (design decision 27), whatever their JSON type.
const KIND = {
  text: z.string(),
  int: INT32,
  bool: z.boolean(),
  any: z.unknown(),
} as const

export const QUEUE_OPTIONS = {
  namespace: 'text',
  task: 'text',
  priority: 'int',
  leaseTime: 'int',
  retryLimit: 'int',
  retryDelay: 'int',
  maxSize: 'int',
  ttl: 'int',
  deadLetterQueue: 'bool',
  dlqAfterMaxRetries: 'bool',
  delayedProcessing: 'int',
  windowBuffer: 'int',
  retentionSeconds: 'int',
  completedRetentionSeconds: 'int',
  retentionEnabled: 'bool',
  encryptionEnabled: 'bool',
  maxWaitTimeSeconds: 'int',
  minPopWaitTime: 'int',
  dedupWindowSeconds: 'int',
  retentionSinkHold: 'any',
  retentionSinkHoldMaxSeconds: 'any',
} as const satisfies Record<string, keyof typeof KIND>

export type QueueOptionKey = keyof typeof QUEUE_OPTIONS
export const QUEUE_OPTION_KEYS = Object.keys(QUEUE_OPTIONS) as QueueOptionKey[]

/** A bag of options: each present key holds a value of its column's type, or null (the default). */
export const optionBag = z
  .object(
    Object.fromEntries(QUEUE_OPTION_KEYS.map((key) => [key, KIND[QUEUE_OPTIONS[key]].nullable().optional()])) as {
      [K in QueueOptionKey]: z.ZodOptional<z.ZodNullable<(typeof KIND)[(typeof QUEUE_OPTIONS)[K]]>>
    },
  )
  .strip()

export type OptionBag = z.output<typeof optionBag>
