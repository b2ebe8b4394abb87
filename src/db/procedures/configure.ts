// Queue configuration (sql/procedures/012_configure.sql): create or edit under the four merge rules.
import { z } from 'zod'
import type { OptionBag } from '../../queue-options.js'
import { defineFamily, tenantScoped } from '../procedure.js'
import { queueOptions, verbatim } from './shared.js'

/** The route's 200 body, sent as it is: the queue as written, with its options but namespace and task. */
const configured = z.object({
  configured: z.literal(true),
  queueId: z.string(),
  partitionId: z.null(),
  queue: z.string(),
  namespace: z.string(),
  task: z.string(),
  storage: z.literal('segments'),
  options: queueOptions.omit({ namespace: true, task: true }),
})

const configureResult = z.object({
  response: verbatim(configured),
  /** The flag as written, so the route refreshes its encryption cache. */
  encryptionEnabled: z.boolean(),
  /** True when this call turned encryption off, which the route logs. */
  encryptionTurnedOff: z.boolean(),
})

export const configureFamily = defineFamily({
  /** Creates or edits a queue's configuration; `replace` resets every option not given to its default. */
  configure_queue_v1: tenantScoped<{ tenant: string; queue: string; options: OptionBag; replace: boolean; now?: Date }>({
    tenant: 'text',
    queue: 'text',
    options: 'jsonb',
    replace: 'boolean',
    now: 'timestamptz',
  }).returns(configureResult),
})
