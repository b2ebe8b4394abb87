// The Hono environment every route shares: what the middleware chain puts on the context.
// Read a variable with c.get(name), never c.var: hono's c.var copies every variable into a new
// object on each access, a cost paid several times per request on the hottest routes.
import type { Config } from '../config.js'
import type { PlacementService } from '../db/placement/service.js'
import type { TenantDatabase } from '../db/tenant-database.js'
import type { Logger } from '../log.js'
import type { EncryptionFlags } from '../messages/encryption-flags.js'
import type { ProcessMetrics } from '../metrics.js'
import type { PopWaker } from '../pop-waker.js'
import type { QueueListingCache } from '../queues/listing-cache.js'
import type { ParkedPolls } from '../tenant-share/parked-polls.js'
import type { Principal } from './auth.js'
import type { Deflater } from './gzip-splice.js'

export interface AppEnv {
  Bindings: Record<string, unknown>
  Variables: {
    requestId: string
    /** The request's tenant: the tenancy header's value, or '' when tenancy is off (design decision 41). */
    tenant: string
    principal: Principal
    /** The parsed JSON body of a route whose body class is required or optional. */
    body: Record<string, unknown>
    /**
     * The request's tenant's database (docs/placement.md), resolved after the guard and bound to
     * that tenant: routes call tenant-scoped procedures without a tenant argument.
     */
    db: TenantDatabase
    /** The placement directory and moves, for the admin placement routes. */
    placement: PlacementService
    config: Config
    log: Logger
    /** The matched route pattern, for logs and metrics (never the raw path). */
    routePattern: string
    /** Same-process long-poll wake-ups; null on Workers, which poll (design decision 35). */
    popWaker: PopWaker | null
    /** This process's counters (GET /metrics, /metrics/prometheus; docs/status.md); one object per app. */
    metrics: ProcessMetrics
    /** The runtime's compressor for answers compressed once and spliced (Node); null on Workers. */
    deflater: Deflater | null
    /** Which queues are encrypted, as the database last said; one map per app. */
    encryptionFlags: EncryptionFlags
    /** The pre-rendered `?stats=cached` listings this app holds, per tenant. */
    listingCache: QueueListingCache
    /** Long polls parked in this app, capped per tenant and in all (src/tenant-share/parked-polls.ts). */
    parkedPolls: ParkedPolls
  }
}
