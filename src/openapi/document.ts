// Builds the OpenAPI 3.1 document from the route registry: every path, method, role set and input
// schema comes from the same RouteSpec objects the router mounts and validates with, so the document
// cannot describe a route that differs from the one served. Success bodies are not modelled (the
// procedures' JSON is passed through; the pages of docs/ describe each), only the error envelope.
import { isSkipped, parseSkipPaths } from '../http/skip-paths.js'
import type { RouteSpec } from '../http/route.js'
import { ERROR_RESPONSES, ERROR_SCHEMA, errorResponses } from './errors.js'
import { jsonSchemaOf, type JsonSchema } from './schema.js'

export interface DocumentOptions {
  version: string
  /** QUEEN_TENANCY_HEADER: when set, tenant routes document it as a required header. */
  tenancyHeader?: string | undefined
  /** JWT_SKIP_PATHS: routes it matches are marked public (a token is optional). */
  skipPaths: string
}

/** Hono's `/timers/:queue` is OpenAPI's `/timers/{queue}`; a catch-all's pattern (`:key{.+}`) is dropped. */
export const openApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)(\{[^}]*\})?/g, '{$1}')

export const pathParams = (path: string) => [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!)

/** The family a route belongs to: the segment after /api/v1, or the first one (health, metrics). */
export function tagOf(path: string): string {
  const segments = path.split('/').filter(Boolean)
  return segments[0] === 'api' ? (segments[2] ?? 'api') : segments[0]!
}

/** getResourcesQueuesByQueueDepth: unique because method and path are. */
export function operationId(spec: Pick<RouteSpec, 'method' | 'path'>): string {
  // GET /status (the process's liveness) and GET /api/v1/status (the dashboard overview) would
  // spell the same words; the root one is named for what it answers.
  if (spec.path === '/status') return `${spec.method.toLowerCase()}Liveness`
  const words = spec.path
    .split('/')
    .filter((s) => s && s !== 'api' && s !== 'v1')
    .map((s) => (s.startsWith(':') ? `by-${s.slice(1)}` : s))
    .flatMap((s) => s.split(/[-_]/))
  return spec.method.toLowerCase() + words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('')
}

function properties(schema: JsonSchema): { props: Record<string, JsonSchema>; required: Set<string> } {
  return { props: (schema.properties ?? {}) as Record<string, JsonSchema>, required: new Set((schema.required ?? []) as string[]) }
}

function parameters(spec: RouteSpec, tenancyHeader: string | undefined): JsonSchema[] {
  const out: JsonSchema[] = []
  const declared = spec.request?.params ? properties(jsonSchemaOf(spec.request.params)).props : {}
  for (const name of pathParams(spec.path)) {
    out.push({ name, in: 'path', required: true, schema: declared[name] ?? { type: 'string' } })
  }
  if (spec.request?.query) {
    const { props, required } = properties(jsonSchemaOf(spec.request.query))
    for (const [name, schema] of Object.entries(props)) {
      const { description, ...rest } = schema
      out.push({ name, in: 'query', required: required.has(name), ...(description ? { description } : {}), schema: rest })
    }
  }
  if (spec.tenant === 'required' && tenancyHeader !== undefined) {
    out.push({
      name: tenancyHeader,
      in: 'header',
      required: true,
      description: 'The tenant (QUEEN_TENANCY_HEADER, docs/tenancy.md): 1-128 characters of A-Z a-z 0-9 . _ -',
      schema: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,128}$' },
    })
  }
  return out
}

function requestBody(spec: RouteSpec): JsonSchema | undefined {
  if (spec.body === 'none') return undefined
  // A body without a schema is read and ignored (partition seek, stats refresh): any JSON object.
  const schema = spec.request?.body ? jsonSchemaOf(spec.request.body) : { type: 'object' }
  return { required: spec.body === 'required', content: { 'application/json': { schema } } }
}

function operation(spec: RouteSpec, options: DocumentOptions, skip: ReturnType<typeof parseSkipPaths>): JsonSchema {
  const open = isSkipped(spec.path, skip)
  const body = requestBody(spec)
  return {
    operationId: operationId(spec),
    summary: spec.summary,
    tags: [tagOf(spec.path)],
    parameters: parameters(spec, options.tenancyHeader),
    ...(body ? { requestBody: body } : {}),
    responses: { '2XX': { description: 'Success; the body is described in docs/ for this route (docs/quickstart-curl.md shows a real answer of each).' }, ...errorResponses(spec) },
    // A skipped path needs no token (the empty requirement); every other route needs a bearer JWT
    // when JWT_ENABLED is on.
    security: open ? [{}, { bearer: [] }] : [{ bearer: [] }],
    'x-queen-roles': [...spec.roles],
    'x-queen-tenant': spec.tenant === 'required',
    'x-queen-body': spec.body,
    ...(spec.brokerWide ? { 'x-queen-broker-wide': true } : {}),
    ...(open ? { 'x-queen-public': true } : {}),
  }
}

export function buildDocument(routes: readonly RouteSpec[], options: DocumentOptions): JsonSchema {
  const skip = parseSkipPaths(options.skipPaths)
  const paths: Record<string, Record<string, JsonSchema>> = {}
  for (const spec of routes) {
    const item = (paths[openApiPath(spec.path)] ??= {})
    item[spec.method.toLowerCase()] = operation(spec, options, skip)
  }
  const tags = [...new Set(routes.map((r) => tagOf(r.path)))].map((name) => ({ name }))
  return {
    openapi: '3.1.1',
    info: {
      title: 'Queen Edge API',
      version: options.version,
      description:
        "Queen MQ's HTTP API on PostgreSQL. Generated from the route registry: paths, role sets and input schemas are the ones the broker enforces. " +
        'x-queen-roles lists the roles a token may carry to be accepted (a set, not a ladder); x-queen-tenant says whether the tenancy header applies; x-queen-body is the body class (required, optional, none).',
    },
    tags,
    paths,
    components: {
      schemas: { Error: ERROR_SCHEMA },
      responses: ERROR_RESPONSES,
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Only when JWT_ENABLED is on; see docs/auth.md.' } },
    },
  }
}
