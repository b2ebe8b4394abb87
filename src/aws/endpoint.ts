// One AWS endpoint for any number of services: each service plugs in its action table, and this
// file does what every service shares. Per request: sniff the protocol, verify SigV4 against the
// configured keys, map the key to this broker's principal and tenant, check the action's roles,
// run it against the JSON-shaped input, and answer in the request's protocol (errors included).
import type { Role } from '../http/auth.js'
import { AwsError, invalidAction, renderJsonError, renderQueryError } from './errors.js'
import type { AccessKey, AccessKeys } from './keys.js'
import { readInput, scopeService, sniffProtocol, type Protocol } from './protocol.js'
import type { Shapes } from './shapes.js'
import { SignatureError, verifySigV4 } from './sigv4.js'
import { queryResponse } from './xml.js'

/** What an action is handed besides its input. C is the host's own per-request context. */
export interface AwsCall<C> {
  context: C
  key: AccessKey
  protocol: Protocol
  url: URL
  requestId: string
  region: string
}

export interface AwsAction<C> {
  /** The roles that may call it (any one suffices), as the broker's routes declare theirs. */
  roles: readonly Role[]
  /** Layout of the answer's lists and maps on the Query protocol, over the service's own shapes. */
  responseShapes?: Shapes
  run(input: Record<string, unknown>, call: AwsCall<C>): Promise<Record<string, unknown> | null>
}

export interface AwsService<C> {
  /** The credential scope's service name (`sqs`, `sns`). */
  scope: string
  /** The JSON protocol's X-Amz-Target prefix, when the service speaks JSON (`AmazonSQS`). */
  targetPrefix?: string
  /** The JSON protocol's `__type` namespace (`com.amazonaws.sqs`). */
  jsonNamespace: string
  /** The Query answers' XML namespace. */
  xmlNamespace: string
  /** This service's own name and status for a failure from the broker itself (a 429, an outage). */
  brokerError(status: number, message: string): AwsError
  /** Query request members' layout (service-wide; action names never collide in meaning). */
  requestShapes: Shapes
  actions: Readonly<Record<string, AwsAction<C>>>
}

export interface AwsEndpointOptions<C> {
  services: readonly AwsService<C>[]
  keys: AccessKeys
  maxBodyBytes: number
  /** Builds the host's context for a verified key; may refuse with an AwsError (a tenant mismatch). */
  context(key: AccessKey, request: Request): Promise<C> | C
  requestId(): string
  /** Turns a host error (a database refusal, an outage) into AWS's shape for the service that was called; unmapped errors propagate. */
  mapError?(error: unknown, service: AwsService<C>): AwsError | null
  now?: () => number
}

export async function handleAwsRequest<C>(request: Request, options: AwsEndpointOptions<C>): Promise<Response> {
  const url = new URL(request.url)
  const requestId = options.requestId()
  const first = options.services[0]
  if (first === undefined) throw new Error('an AWS endpoint needs at least one service')
  let protocol: Protocol = request.headers.has('x-amz-target') ? 'json' : 'query'
  let service = pickService(options.services, request.headers, url)
  try {
    const declared = Number(request.headers.get('content-length') ?? '0')
    if (declared > options.maxBodyBytes) throw new AwsError('RequestEntityTooLarge', `The request body exceeds ${options.maxBodyBytes} bytes.`, 413)
    const body = new Uint8Array(await request.arrayBuffer())
    if (body.length > options.maxBodyBytes) throw new AwsError('RequestEntityTooLarge', `The request body exceeds ${options.maxBodyBytes} bytes.`, 413)
    const prefixes = options.services.flatMap((s) => (s.targetPrefix ? [s.targetPrefix] : []))
    const sniffed = sniffProtocol(request.headers, url, body, prefixes)
    protocol = sniffed.protocol
    if (protocol === 'json') service = options.services.find((s) => s.targetPrefix && request.headers.get('x-amz-target')?.startsWith(`${s.targetPrefix}.`)) ?? service

    const verified = await verifySigV4({ method: request.method, url, headers: request.headers, body }, (id) => options.keys.get(id), options.services.map((s) => s.scope), options.now?.())
    service = options.services.find((s) => s.scope === verified.service) ?? service
    if (sniffed.action === null) throw new AwsError('MissingAction', 'The request must name an Action.')
    const action = Object.hasOwn(service.actions, sniffed.action) ? service.actions[sniffed.action] : undefined
    if (action === undefined) throw invalidAction(sniffed.action)
    const key = options.keys.get(verified.accessKeyId) as AccessKey
    if (!action.roles.includes(key.role)) throw new AwsError('AccessDenied', `Access key ${key.accessKeyId} (role ${key.role}) may not call ${sniffed.action}.`, 403)

    const input = readInput(protocol, url, body, service.requestShapes)
    const context = await options.context(key, request)
    const result = await action.run(input, { context, key, protocol, url, requestId, region: verified.region })
    if (protocol === 'json') {
      return new Response(JSON.stringify(result ?? {}), { status: 200, headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': requestId } })
    }
    const xml = queryResponse(sniffed.action, service.xmlNamespace, result, { ...service.requestShapes, ...action.responseShapes }, requestId)
    return new Response(xml, { status: 200, headers: { 'content-type': 'text/xml', 'x-amzn-requestid': requestId } })
  } catch (error) {
    const aws = toAwsError(error) ?? options.mapError?.(error, service) ?? null
    if (aws === null) throw error
    return protocol === 'json' ? renderJsonError(aws, service.jsonNamespace, requestId) : renderQueryError(aws, requestId)
  }
}

function pickService<C>(services: readonly AwsService<C>[], headers: Headers, url: URL): AwsService<C> {
  const scope = scopeService(headers, url)
  return services.find((s) => s.scope === scope) ?? (services[0] as AwsService<C>)
}

const SIGNATURE_STATUS: Record<SignatureError['code'], AwsError['status']> = {
  MissingAuthenticationToken: 403,
  IncompleteSignature: 400,
  InvalidClientTokenId: 403,
  SignatureDoesNotMatch: 403,
  RequestExpired: 400,
  AccessDenied: 403,
}

function toAwsError(error: unknown): AwsError | null {
  if (error instanceof AwsError) return error
  if (error instanceof SignatureError) return new AwsError(error.code, error.message, SIGNATURE_STATUS[error.code])
  return null
}
