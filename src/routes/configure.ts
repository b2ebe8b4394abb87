// POST /api/v1/configure (docs/options.md): normalise the body into one option bag, call
// configure_queue_v1 once, answer its response verbatim.
import { z } from 'zod'
import { fromConfigureError } from '../errors.js'
import { ROLE_SETS, route } from '../http/route.js'
import { validate } from '../http/validate.js'
import { NAME_MAX } from '../names.js'
import { QUEUE_OPTION_KEYS, optionBag, type OptionBag } from '../queue-options.js'

export const configureBody = z.looseObject({
  queue: z.string({ error: 'must be a string' }).max(NAME_MAX, `must be at most ${NAME_MAX} characters`),
  mode: z.enum(['merge', 'replace'], { error: 'must be "merge" or "replace"' }).optional(),
  options: z.record(z.string(), z.unknown(), { error: 'must be an object' }).nullable().optional(),
})

const FOLDED = ['namespace', 'task'] as const

/**
 * The option bag (docs/options.md, "Body"): recognised option keys at the top level, overlaid by
 * the keys under `options`, then top-level namespace/task only when they are non-empty strings (a
 * top-level '' or null means "not said"; under `options` it is said). Unknown keys are dropped.
 */
function optionsOf(body: z.output<typeof configureBody>): OptionBag {
  const bag: Record<string, unknown> = {}
  for (const key of QUEUE_OPTION_KEYS) {
    if (key in body && !(FOLDED as readonly string[]).includes(key)) bag[key] = body[key]
  }
  Object.assign(bag, body.options ?? {})
  for (const key of FOLDED) {
    const value = body[key]
    if (typeof value === 'string' && value !== '') bag[key] = value
  }
  return validate(optionBag, bag)
}

export const configureRoutes = [
  route(
    {
      method: 'POST',
      path: '/api/v1/configure',
      summary: 'Create a queue or change its options (merge or replace)',
      roles: ROLE_SETS.RW_A,
      tenant: 'required',
      body: 'required',
      request: { body: configureBody },
    },
    async (c, { body }) => {
      const options = optionsOf(body)
      const db = c.get('db')
      const result = await db.call('configure_queue_v1', { queue: body.queue, options, replace: body.mode === 'replace' }).catch((error: unknown) => {
        throw fromConfigureError(error)
      })
      // This isolate's next push uses the new flag at once; other isolates learn it from the push
      // procedure's QMENC refusal (design decision 24), so no peer needs telling.
      c.get('encryptionFlags').remember(db.tenant, [{ name: body.queue, encryptionEnabled: result.encryptionEnabled }])
      if (result.encryptionTurnedOff) {
        // Queen's SDK create() always sends encryptionEnabled:false, so an innocent-looking call turns
        // encryption off; new messages are then stored in clear. Worth a line in the log.
        c.get('log').warn('configure turned encryption off', { requestId: c.get('requestId'), tenant: db.tenant, queue: body.queue })
      }
      return c.json(result.response)
    },
  ),
]
