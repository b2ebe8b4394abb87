// One validator, one failure shape: a zod failure becomes 400 invalid_request. How the
// first issue is worded depends on where the input came from, because the wire texts are fixed:
// bodies say "queue: must be a string", query and path parameters say "limit must be an integer",
// and some bodies carry Queen's whole sentences (push, ack), which a schema states itself and
// marks with worded(schema, sentence). The formatter travels with the schema object, so whoever
// validates with that schema words its failures the same way.
import type { z } from 'zod'
import { badRequest } from '../errors.js'

export type Issue = z.core.$ZodIssue
export type IssueFormat = (issue: Issue) => string

const pathOf = (issue: Issue) => issue.path.map(String).join('.')

/**
 * Bodies: "field: message", the whole body named "body". A malformed instant keeps the text every
 * route has always given it, "since must be an ISO-8601 timestamp" (query-schema.ts instant()).
 */
export const fieldColon: IssueFormat = (issue) =>
  issue.code === 'custom' && issue.params?.instant === true ? fieldSpace(issue) : `${pathOf(issue) || 'body'}: ${issue.message}`
/** Query and path parameters: "name message"; a cross-field refinement has no path. */
export const fieldSpace: IssueFormat = (issue) => (pathOf(issue) ? `${pathOf(issue)} ${issue.message}` : issue.message)
/** Schemas whose messages are complete sentences: the message as it is. */
export const sentence: IssueFormat = (issue) => issue.message

const FORMATS = new WeakMap<z.ZodType, IssueFormat>()

/** Attaches a wording to a schema; validate() uses it for that schema wherever it is called. */
export function worded<S extends z.ZodType>(schema: S, format: IssueFormat): S {
  FORMATS.set(schema, format)
  return schema
}

export function validate<S extends z.ZodType>(schema: S, value: unknown, fallback: IssueFormat = fieldColon): z.output<S> {
  const result = schema.safeParse(value)
  if (result.success) return result.data
  const issue = result.error.issues[0]
  if (!issue) throw badRequest('body: is invalid')
  throw badRequest((FORMATS.get(schema) ?? fallback)(issue))
}

type Path = readonly PropertyKey[] | undefined

/** A path as Queen's texts write it: `operations[2].items[0]`. */
export function pathText(path: Path): string {
  let out = ''
  for (const key of path ?? []) out += typeof key === 'number' ? `[${key}]` : `${out ? '.' : ''}${String(key)}`
  return out
}

/**
 * Queen's position suffix: the path up to its last array index, e.g. ` (items[3])` for a fault at
 * items[3].queue; '' when the fault is not inside an array element.
 */
export function positionOf(path: Path): string {
  const keys = path ?? []
  let last = -1
  keys.forEach((key, i) => {
    if (typeof key === 'number') last = i
  })
  return last < 0 ? '' : ` (${pathText(keys.slice(0, last + 1))})`
}

/** Queen's text for a fault, with the position suffix ` (items[N])` the path gives: push and ack items. */
export const queenText = (text: string) => ({ error: (iss: { path?: PropertyKey[] }) => `${text}${positionOf(iss.path)}` })
