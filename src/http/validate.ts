// One validator, one failure shape (STYLE 5): a zod failure becomes 400 invalid_request whose
// message names the field, e.g. "queue: must be a string".
import type { z } from 'zod'
import { badRequest } from '../errors.js'

export function validate<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value)
  if (result.success) return result.data
  const issue = result.error.issues[0]
  const field = issue?.path.map(String).join('.') || 'body'
  throw badRequest(`${field}: ${issue?.message ?? 'is invalid'}`)
}
