// Mounts the AWS endpoint (./endpoint.ts) on the broker's app, beside its own routes: `POST /` (what
// JSON-protocol SDKs call), the queue URLs `/<account>/<queue>` (what Query-protocol SDKs post to),
// and a presigned `GET` on either. A plain `GET /` stays the console. The facade is not a RouteDef:
// one path carries many actions, each with its own roles, and SigV4 keys rather than the broker's
// tokens say who calls (docs/sqs.md).
import type { Context, Hono, MiddlewareHandler } from 'hono'
import type { Config } from '../config.js'
import { toHttpError } from '../errors.js'
import type { AppEnv } from '../http/env.js'
import { describeError, type Logger } from '../log.js'
import { handleAwsRequest, type AwsService } from './endpoint.js'
import { AwsError } from './errors.js'
import { tenantOf, type AccessKeys } from './keys.js'

export type AwsContext = Context<AppEnv>

export interface AwsMount {
  config: Config
  keys: AccessKeys
  log: Logger
  services: readonly AwsService<AwsContext>[]
  /** The broker's own placement step: picks the tenant's database once the tenant is known. */
  place: MiddlewareHandler<AppEnv>
}

/** Paths the endpoint answers, for the route table's documentation and the 405 logic. */
export const AWS_PATHS = ['/', '/:account{[0-9]{12}}/:queue'] as const

export function mountAwsEndpoint(app: Hono<AppEnv>, mount: AwsMount): void {
  const { config, keys, log } = mount
  const handle = async (c: AwsContext): Promise<Response> => {
    c.set('routePattern', 'aws')
    return handleAwsRequest(c.req.raw, {
      services: mount.services,
      keys,
      maxBodyBytes: config.MAX_BODY_BYTES,
      requestId: () => c.get('requestId') ?? crypto.randomUUID(),
      context: async (key) => {
        const tenant = tenantOf(key, config.QUEEN_TENANCY_HEADER, (name) => c.req.header(name))
        if (typeof tenant !== 'string') throw new AwsError('AccessDenied', tenant.refusal, 403)
        c.set('tenant', tenant)
        c.set('principal', { roles: new Set([key.role]), sub: `aws:${key.accessKeyId}`, tenant: key.tenant })
        await mount.place(c, async () => {})
        return c
      },
      mapError: (error, service) => {
        const http = toHttpError(error)
        if (http.status >= 500) log.error('AWS request failed', { requestId: c.get('requestId'), status: http.status, ...describeError(error) })
        return service.brokerError(http.status, http.message)
      },
    })
  }
  app.post('/', handle)
  app.on(['GET', 'POST'], '/:account{[0-9]{12}}/:queue', handle)
  // A presigned GET on `/` carries its Action in the URL; every other GET / is the console's.
  app.get('/', async (c, next) => {
    const query = new URL(c.req.url).searchParams
    if (query.has('Action') || query.has('X-Amz-Credential')) return handle(c)
    await next()
  })
}
