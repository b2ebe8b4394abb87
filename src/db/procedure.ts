// A typed procedure definition: the SQL call in named notation, how arguments become parameters,
// and the zod schema that parses what comes back. Routes and lanes only ever see parsed results.
import type { z } from 'zod'

/** The PostgreSQL type each argument is cast to, so a text parameter never picks the wrong overload. */
export type Cast = 'text' | 'uuid' | 'int' | 'bigint' | 'boolean' | 'jsonb' | 'timestamptz' | 'interval' | 'text[]'

export interface Procedure<A, R> {
  readonly name: string
  readonly params: { readonly [K in keyof A]-?: Cast }
  readonly result: z.ZodType<R>
}

export function procedure<A extends object, R>(
  name: string,
  params: { readonly [K in keyof A]-?: Cast },
  result: z.ZodType<R>,
): Procedure<A, R> {
  return { name, params, result }
}

const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

/**
 * Builds `select queen.<name>(p_a => $1::text, …) as result`. Arguments that are undefined are left
 * out, so the procedure's own DEFAULT applies (p_now above all: routes never pass it, tests do).
 */
export function compileCall<A, R>(proc: Procedure<A, R>, args: A): { text: string; values: unknown[] } {
  const parts: string[] = []
  const values: unknown[] = []
  for (const key of Object.keys(proc.params) as (keyof A & string)[]) {
    const value = args[key]
    if (value === undefined) continue
    const cast = proc.params[key]
    values.push(cast === 'jsonb' ? JSON.stringify(value) : value instanceof Date ? value.toISOString() : value)
    parts.push(`p_${snake(key)} => $${values.length}::${cast}`)
  }
  return { text: `select queen.${proc.name}(${parts.join(', ')}) as result`, values }
}
