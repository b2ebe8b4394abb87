// Namespaces the broker keeps for its own state (docs/kv.md): every namespace starting "queen."
// (the archive sink's pointers in queen.sink, the SQS and SNS facades' registries). Clients may
// read them, as they read any key of their tenant, but never write them: retention trusts the
// sink's pointer only because nothing but the sink's fenced commit can move it. The procedures
// themselves take any namespace; only the client routes check, so broker code writes through them.
import { HttpError } from '../errors.js'

export const RESERVED_NAMESPACE_PREFIX = 'queen.'

/** The operations that change a key; get, getMany and getPrefix stay allowed. */
const WRITES = new Set(['put', 'putIfAbsent', 'delete', 'incr'])

export const isReservedNamespace = (ns: unknown): ns is string => typeof ns === 'string' && ns.startsWith(RESERVED_NAMESPACE_PREFIX)

/** 400 naming the namespace, before anything is written. */
export function reservedNamespaceError(where: string, ns: string): HttpError {
  return new HttpError(400, 'kv_reserved_namespace', `${where}: namespace ${ns} is reserved to the broker (namespaces starting "${RESERVED_NAMESPACE_PREFIX}" are read-only to clients)`)
}

/** Refuses the first write of `ops` (a batch's operations or a transaction's kv rider) into a reserved namespace. */
export function refuseReservedWrites(ops: readonly unknown[], field: string): void {
  ops.forEach((op, i) => {
    if (typeof op !== 'object' || op === null) return
    const { op: name, ns } = op as { op?: unknown; ns?: unknown }
    if (typeof name === 'string' && WRITES.has(name) && isReservedNamespace(ns)) throw reservedNamespaceError(`${field}[${i}]`, ns)
  })
}
