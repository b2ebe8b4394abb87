// The one conversion from a route's zod schema to JSON Schema, used by the document and by the
// test that compares them. `io: 'input'` because the document describes what a client may send:
// the query helpers transform strings into numbers and booleans, and a client sends the strings.
import { z } from 'zod'

export type JsonSchema = Record<string, unknown>

export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema
}
