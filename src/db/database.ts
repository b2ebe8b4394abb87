// The broker's database handle: typed procedure calls over any PoolLike, with every driver error
// normalised into a DbError. Node builds one per process, the Worker one per request.
import { compileCall, type Procedure } from './procedure.js'
import { procedures, type ArgsOf, type ProcedureName, type ResultOf } from './procedures.js'
import { toDbError } from './errors.js'
import { fuseEphemeralPops, sliceMessages } from './ephemeral-fusion.js'
import { sliceDeliveries } from '../ephemeral/pop-result.js'
import { fuseEphemeralPushes } from './ephemeral-push-fusion.js'
import { fuseAck, fusePush, type FusionOptions } from './fusion.js'
import type { PoolLike } from './queryable.js'

export interface PoolStats {
  total: number
  idle: number
  waiting: number
}

/**
 * Runs a database call within a share of the connections (a tenant's, src/tenant-share/); a fused
 * call runs within its first member's, so the share limits the calls that reach the pool. `heavy`:
 * whether that tenant takes most of the database time while others are active, so fusion does not
 * hold another tenant's batch behind its calls.
 */
export type CallGate = (<T>(call: () => Promise<T>) => Promise<T>) & { heavy?: () => boolean }

export interface Database {
  call<N extends ProcedureName>(name: N, args: ArgsOf<N>, gate?: CallGate): Promise<ResultOf<N>>
  /** One real round trip; rejects with a DbError when it fails or takes longer than timeoutMs. */
  ping(timeoutMs: number): Promise<void>
  /** Connection counts of a long-lived pool; null where the pool is per request (Workers). */
  poolStats(): PoolStats | null
  close(): Promise<void>
}

export function createDatabase(
  pool: PoolLike,
  options: { longLived: boolean; fusion?: { push?: FusionOptions; ack?: FusionOptions; ephemeral?: boolean } },
): Database {
  // pg emits 'error' on idle clients whose server went away; unhandled, that kills the process.
  pool.on?.('error', () => {})
  const direct = async <N extends ProcedureName>(name: N, args: ArgsOf<N>): Promise<ResultOf<N>> => {
    // The registry's entries are a union; the typed signature above already tied args to name.
    const proc = procedures[name] as Procedure<object, unknown>
    const { text, values } = compileCall(proc, args as object)
    let rows
    try {
      ;({ rows } = await pool.query(text, values))
    } catch (error) {
      throw toDbError(error)
    }
    return proc.result.parse(rows[0]?.result) as ResultOf<N>
  }
  // Push and ack fusion (design decision 45) on a long-lived pool only, when asked for (src/node.ts).
  const fusion = options.longLived ? options.fusion : undefined
  const gated = <N extends ProcedureName>(name: N, args: ArgsOf<N>, gate: CallGate | undefined) => (gate ? gate(() => direct(name, args)) : direct(name, args))
  const push = fusion?.push && fusePush((args, gate) => gated('log_push_v1', args, gate), fusion.push)
  const ack = fusion?.ack && fuseAck((args, gate) => gated('log_ack_v1', args, gate), fusion.ack)
  // Ephemeral pops of one group queue here while one is in flight (src/db/ephemeral-fusion.ts).
  const ephemeralPop = fusion?.ephemeral && fuseEphemeralPops((args, gate) => gated('ephemeral_pop_v1', args, gate), sliceMessages)
  // v2 leases each member's share in a row of its own, so each consumer's ack settles its own row.
  const ephemeralPopV2 =
    fusion?.ephemeral &&
    fuseEphemeralPops(
      (args: ArgsOf<'ephemeral_pop_v2'>, gate) => gated('ephemeral_pop_v2', args, gate),
      sliceDeliveries,
      (first, batches) => ({ ...first, batch: batches.reduce((sum, b) => sum + b, 0), shares: batches }),
    )
  // Ephemeral pushes to one queue likewise, as one call of several partitions (src/db/ephemeral-push-fusion.ts).
  const ephemeralPush =
    fusion?.ephemeral &&
    fuseEphemeralPushes(
      (args, gate) => gated('ephemeral_push_v1', args, gate),
      (args, gate) => gated('ephemeral_push_many_v1', args, gate),
    )
  return {
    call(name, args, gate) {
      if (push && name === 'log_push_v1') return push(args as ArgsOf<'log_push_v1'>, gate) as Promise<ResultOf<typeof name>>
      if (ack && name === 'log_ack_v1') return ack(args as ArgsOf<'log_ack_v1'>, gate) as Promise<ResultOf<typeof name>>
      if (ephemeralPush && name === 'ephemeral_push_v1') return ephemeralPush(args as ArgsOf<'ephemeral_push_v1'>, gate) as Promise<ResultOf<typeof name>>
      if (ephemeralPop && name === 'ephemeral_pop_v1') return ephemeralPop(args as ArgsOf<'ephemeral_pop_v1'>, gate) as Promise<ResultOf<typeof name>>
      if (ephemeralPopV2 && name === 'ephemeral_pop_v2') return ephemeralPopV2(args as ArgsOf<'ephemeral_pop_v2'>, gate) as Promise<ResultOf<typeof name>>
      return gated(name, args, gate)
    },
    async ping(timeoutMs) {
      let timer: ReturnType<typeof setTimeout> | undefined
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('ping timed out')), timeoutMs)
      })
      try {
        // VOLATILE, so a caching pooler (Hyperdrive caches reads) can never answer it from cache.
        await Promise.race([pool.query('select clock_timestamp()'), timeout])
      } catch (error) {
        throw toDbError(error)
      } finally {
        clearTimeout(timer)
      }
    },
    poolStats() {
      if (!options.longLived) return null
      return { total: pool.totalCount ?? 0, idle: pool.idleCount ?? 0, waiting: pool.waitingCount ?? 0 }
    },
    close: () => pool.end(),
  }
}
