// A typed procedure definition: the SQL call in named notation, how arguments become parameters,
// and the zod schema that parses what comes back. Routes and lanes only ever see parsed results.
import type { z } from 'zod'

/** The PostgreSQL type each argument is cast to, so a text parameter never picks the wrong overload. */
export type Cast = 'text' | 'uuid' | 'int' | 'bigint' | 'boolean' | 'jsonb' | 'timestamptz' | 'interval' | 'text[]' | 'int[]' | 'bigint[]' | 'boolean[]'

/** One cast per argument: every key of the arguments, none more. */
export type Params<A> = { readonly [K in keyof A]-?: Cast }

/**
 * Whose rows a procedure works on: one tenant's (the caller's), or the whole broker's (lanes,
 * maintenance steps, placement, the maintenance flags), where no request's tenant applies.
 */
export type Scope = 'tenant' | 'broker'

export interface Procedure<A, R, S extends Scope = Scope> {
  readonly name: string
  readonly scope: S
  readonly params: Params<A>
  readonly result: z.ZodType<R>
}

/** A procedure before its family names it: the name is the key it is registered under. */
export interface Unnamed<A, R, S extends Scope = Scope> {
  readonly scope: S
  readonly params: Params<A>
  readonly result: z.ZodType<R>
}

// The scope stays in the entry's type, so the request's database handle can accept only the
// tenant-scoped names (src/db/tenant-database.ts).
function scoped<S extends Scope>(scope: S) {
  return <A extends object>(params: Params<A>) => ({
    returns: <R>(result: z.ZodType<R>): Unnamed<A, R, S> => ({ scope, params, result }),
  })
}

/** A procedure on the caller's tenant: `tenantScoped<Args>({ …casts }).returns(schema)`. */
export const tenantScoped = scoped('tenant')

/** A procedure over the whole broker (or on a tenant it is told of, never the caller's by default). */
export const brokerWide = scoped('broker')

type Named<T> = { readonly [K in keyof T]: T[K] extends Unnamed<infer A, infer R, infer S> ? Procedure<A, R, S> : never }

/**
 * A family of procedures keyed by their SQL names (one sql/procedures file each): every entry is
 * named by its key, so no name is written twice.
 */
export function defineFamily<T extends Record<string, Unnamed<any, any>>>(entries: T): Named<T> {
  return Object.fromEntries(Object.entries(entries).map(([name, entry]) => [name, { name, ...entry }])) as Named<T>
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
