// The broker's whole configuration: one zod schema, read from process.env on Node and from the
// Worker's env bindings on the edge. Every variable the broker reads lives here (design decision 36), and the
// README's configuration table is checked against VARIABLES by a test, so the two cannot drift.
import { z } from 'zod'
import { parseAccessKeys, type AccessKeys } from './aws/keys.js'
import { parseCorsOrigins, type CorsOrigins } from './http/cors-origins.js'

export type Runtime = 'node' | 'workers'

const MiB = 1024 * 1024

const int = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a non-negative integer')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max))

const bool = z
  .string()
  .regex(/^(true|false|1|0)$/i, 'must be true, false, 1 or 0')
  .transform((v) => v === '1' || v.toLowerCase() === 'true')

const text = z.string().min(1)

const encryptionKey = z
  .string()
  .refine(
    (v) => /^[0-9a-fA-F]{64}$/.test(v) || base64Length(v) === 32,
    'must be 32 bytes as 64 hex characters or base64',
  )

function base64Length(v: string): number {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(v)) return -1
  return Math.floor((v.length * 3) / 4) - (v.match(/=+$/)?.[0].length ?? 0)
}

const corsOrigins = z.string().transform((v, ctx): CorsOrigins => {
  const parsed = parseCorsOrigins(v)
  if (typeof parsed === 'string' && parsed !== '*') {
    ctx.addIssue({ code: 'custom', message: parsed })
    return z.NEVER
  }
  return parsed
})

const accessKeys = z.string().transform((v, ctx): AccessKeys => {
  const parsed = parseAccessKeys(v)
  if (typeof parsed === 'string') {
    ctx.addIssue({ code: 'custom', message: parsed })
    return z.NEVER
  }
  return parsed
})

const TENANCY_HEADER = /^[A-Za-z0-9-]+$/

// QUEEN_DATABASES (docs/placement.md): a JSON object of named databases besides the default one
// (DATABASE_URL, named `default`). A value is a PostgreSQL connection string, or on Workers
// `binding:<NAME>` naming a Hyperdrive binding. JSON, not `name=url,…`: connection strings may hold
// commas and equals signs in their query part.
export const DATABASE_NAME = /^[a-z][a-z0-9_]{0,62}$/
const databaseTarget = z
  .string()
  .regex(/^(postgres(ql)?:\/\/.+|binding:[A-Za-z_][A-Za-z0-9_]*)$/, 'values must be postgres:// connection strings or binding:<NAME>')
const databaseMap = z
  .string()
  .transform((v, ctx) => {
    try {
      return JSON.parse(v) as unknown
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON object of name -> connection string' })
      return z.NEVER
    }
  })
  .pipe(
    z
      .record(z.string().regex(DATABASE_NAME, 'names must be 1-63 characters of a-z 0-9 _, starting with a letter'), databaseTarget, {
        error: 'must be a JSON object of name -> connection string',
      })
      .refine((m) => !('default' in m), 'must not name `default` (that is DATABASE_URL)'),
  )

/** One documented variable: its parser, its default per runtime (undefined = unset), and its meaning. */
interface Variable {
  schema: z.ZodType
  default?: string | { node: string; workers: string }
  meaning: string
}

export const VARIABLES = {
  PORT: { schema: int(1, 65535), default: '6632', meaning: 'Node listen port' },
  HOST: { schema: text, default: '127.0.0.1', meaning: 'Node listen address' },
  DATABASE_URL: { schema: text, meaning: 'PostgreSQL connection string (unset on Node: embedded PostgreSQL; on Workers: the Neon pooled endpoint, a secret)' },
  QUEEN_DATABASES: { schema: databaseMap, meaning: 'named databases for tenant placement, a JSON object `{"eu":"postgres://…"}` (on Workers a value may be `binding:<NAME>`, a Hyperdrive binding); unset: one database (docs/placement.md)' },
  PLACEMENT_CACHE_TTL_MS: { schema: int(50, 60000), default: '2000', meaning: 'how long a process or isolate trusts its cached placement map before checking the directory version (docs/placement.md)' },
  DB_POOL_SIZE: { schema: int(1, 1000), default: '10', meaning: 'Node pool size; caps every limiter of the process' },
  QUEEN_DATA_DIR: { schema: text, default: './.queen', meaning: 'embedded PostgreSQL data directory' },
  QUEEN_TENANCY_HEADER: { schema: z.string().regex(TENANCY_HEADER, 'must be an HTTP header name'), meaning: 'header naming the tenant of every request (unset: single tenant `\'\'`)' },
  QUEEN_ENCRYPTION_KEY: { schema: encryptionKey, meaning: 'AES-256-GCM key for encryptionEnabled queues (64 hex characters or base64)' },
  QUEEN_ENCRYPTION_KEY_PREVIOUS: { schema: encryptionKey, meaning: 'previous key, still used to decrypt during a rotation' },
  CORS_ORIGINS: { schema: corsOrigins, meaning: 'origins a browser may call from: a comma list (`https://app.example,https://ops.example`) or `*` (any); unset: no CORS headers at all (docs/security.md)' },
  JWT_ENABLED: { schema: bool, default: 'false', meaning: 'turn JWT authentication on' },
  JWT_ALGORITHM: { schema: z.enum(['HS256', 'RS256', 'RS384', 'RS512', 'EdDSA', 'auto']), default: 'HS256', meaning: 'HS256, RS256, RS384, RS512, EdDSA or auto' },
  JWT_SECRET: { schema: text, meaning: 'HS256 key (a secret), at least 32 bytes: a shorter one is refused at start' },
  JWT_PUBLIC_KEY: { schema: text, meaning: 'PEM public key for RS*/EdDSA' },
  JWT_JWKS_URL: { schema: z.url(), meaning: 'JWKS endpoint; keys chosen by kid; https only, except a localhost address or JWT_JWKS_ALLOW_HTTP' },
  JWT_JWKS_ALLOW_HTTP: { schema: bool, default: 'false', meaning: 'accept an http:// JWT_JWKS_URL on a non-local host (tests, a trusted private network)' },
  JWT_JWKS_MAX_STALE_SECONDS: { schema: int(0, 7 * 86400), default: '3600', meaning: 'how long past its 10-minute freshness a cached JWKS still verifies while refetching fails; then 503 jwks_unavailable' },
  JWT_REQUIRE_EXP: { schema: bool, default: 'false', meaning: 'refuse tokens without an `exp` claim (otherwise such a token never expires)' },
  JWT_ISSUER: { schema: text, meaning: 'required `iss` when set' },
  JWT_AUDIENCE: { schema: text, meaning: 'required `aud` when set' },
  JWT_ROLES_CLAIM: { schema: text, default: 'role', meaning: 'claim holding one role string' },
  JWT_ROLES_ARRAY_CLAIM: { schema: text, default: 'roles', meaning: 'claim holding an array of roles' },
  JWT_SKIP_PATHS: { schema: z.string().refine((v) => v.split(',').every((e) => e.trim() === '' || e.trim().startsWith('/')), 'entries must start with /'), default: '/health,/metrics/prometheus,/metrics,/', meaning: 'comma-separated paths that skip authentication: exact, or a prefix when the entry ends in `/` (a bare `/` matches only `/`)' },
  JWT_CLOCK_SKEW: { schema: int(0, 86400), default: '30', meaning: 'seconds of leeway on exp/nbf/iat' },
  JWT_ROLE_ADMIN: { schema: text, default: 'admin', meaning: 'role string for admin' },
  JWT_ROLE_READ_WRITE: { schema: text, default: 'read-write', meaning: 'role string for read-write' },
  JWT_ROLE_READ_ONLY: { schema: text, default: 'read-only', meaning: 'role string for read-only' },
  JWT_ROLE_WRITE_ONLY: { schema: text, default: 'write-only', meaning: 'role string for write-only' },
  JWT_TENANT_CLAIM: { schema: text, default: 'tenant', meaning: 'claim binding a token to a tenant' },
  STATS_INTERVAL_MS: { schema: int(100), default: '10000', meaning: 'stats lane interval' },
  RETAINED_BYTES_INTERVAL_MS: { schema: int(100), default: '600000', meaning: 'retained-bytes lane interval' },
  RETENTION_INTERVAL_MS: { schema: int(100), default: '300000', meaning: 'retention lane interval' },
  EVICTION_INTERVAL_MS: { schema: int(100), default: '60000', meaning: 'maxWaitTimeSeconds eviction lane interval' },
  DEDUP_PURGE_INTERVAL_MS: { schema: int(100), default: '300000', meaning: 'dedup-hash purge lane interval' },
  TIMERS_FIRE_ON_POP: { schema: bool, default: { node: 'false', workers: 'true' }, meaning: "a queue's pop first fires its due timers (Workers' lanes run once a minute)" },
  KV_TIMERS_INTERVAL_MS: { schema: int(100), default: '100', meaning: 'timer fire and key/value expiry sweep lane interval (Node; Workers run it each cron minute)' },
  LANE_LEASE_SECONDS: { schema: int(1, 3600), default: '120', meaning: 'maintenance lease TTL, renewed between steps' },
  TRACE_RETENTION_DAYS: { schema: int(0), default: '30', meaning: 'message traces are aged out after this many days' },
  METRICS_RETENTION_DAYS: { schema: int(0), default: '90', meaning: 'per-minute queue metrics are kept this many days' },
  DLQ_RETENTION_DAYS: { schema: int(0), default: '0', meaning: 'dead-letter rows are aged out after this many days (0: kept until the queue is deleted)' },
  MAX_PARKED_POLLS: { schema: int(1), default: '1000', meaning: 'long polls parked at once per process (Workers: per isolate); one more answers 429 with Retry-After (docs/security.md)' },
  MAX_PARKED_POLLS_PER_TENANT: { schema: int(1), default: '100', meaning: 'long polls one tenant may have parked per process or isolate, with tenancy on; one more answers 429 with Retry-After' },
  TENANT_DB_CONCURRENCY: { schema: int(0, 1000), default: '5', meaning: 'database calls one tenant may have in flight per process or isolate, with tenancy on (at most DB_POOL_SIZE); more wait behind that tenant\'s own (0: no limit)' },
  TENANT_DB_CONCURRENCY_SHARED: { schema: int(1, 1000), default: '2', meaning: 'database calls one tenant may have in flight while another tenant has called within the last second (at most TENANT_DB_CONCURRENCY); it gets its full TENANT_DB_CONCURRENCY only while it is alone' },
  TENANT_DB_CONCURRENCY_HEAVY: { schema: int(1, 1000), default: '1', meaning: 'database calls a tenant may have in flight while another tenant is active and its calls took more than TENANT_DB_HEAVY_PERCENT of the database time in the last 1-2 s (at most TENANT_DB_CONCURRENCY_SHARED)' },
  TENANT_DB_HEAVY_PERCENT: { schema: int(1, 100), default: '60', meaning: 'the part of the database time, in percent, past which a tenant counts as heavy (TENANT_DB_CONCURRENCY_HEAVY)' },
  TENANT_DB_QUEUE: { schema: int(0), default: '1000', meaning: 'requests of one tenant that may wait on the database beyond its TENANT_DB_CONCURRENCY share (counted before push and ack fusion); one more answers 429 tenant_busy with Retry-After' },
  TENANT_DB_HEAVY_DUTY_PERCENT: { schema: int(1, 100), default: '50', meaning: 'the part of the time, in percent, a heavy tenant\'s database calls may run while another tenant is active: after a call that took d its next waits d × (100 − this) / this, at most 1 s (100: no pause)' },
  MAX_POP_WAIT_MS: { schema: int(0), default: { node: '30000', workers: '25000' }, meaning: 'long-poll cap; longer client timeouts are clamped' },
  POP_LINGER_MS: { schema: int(0, 1000), default: '50', meaning: 'how long a long poll woken by a push waits for more messages before it claims (0: none); docs/long-poll.md' },
  DEFAULT_SUBSCRIPTION_MODE: { schema: z.enum(['all', 'from_beginning', 'new', 'new-only']), default: 'new', meaning: 'where a consumer group that names no subscriptionMode starts: `new` at the tail (`new-only` is the same), `all` at the oldest retained message; queue mode always reads everything (docs/consumer-groups.md)' },
  QUEEN_POP_AUTOPILOT: { schema: z.enum(['on', 'shadow', 'off']), default: 'on', meaning: 'pop autopilot: `on` sizes the knobs an `autopilot=true` pop leaves out and echoes them, `shadow` only logs what it would choose, `off` ignores the flag (docs/pop-autopilot.md)' },
  STATEMENT_TIMEOUT_MS: { schema: int(1, 60000), default: '25000', meaning: 'set on the database role by `npm run db:migrate`; the broker refuses to serve when the role timeout is 0 or over 60 s' },
  MAX_BODY_BYTES: { schema: int(1024), default: { node: String(16 * MiB), workers: String(8 * MiB) }, meaning: 'request bodies above this are refused with 413' },
  MAX_FRAME_BYTES: { schema: int(1024), default: String(4 * MiB), meaning: 'largest stored frame (after encryption); larger push items are refused with 413' },
  MAX_PUSH_ITEMS: { schema: int(1, 1_000_000), default: '10000', meaning: 'most items one push may carry' },
  MAX_ACK_ITEMS: { schema: int(1, 1_000_000), default: '10000', meaning: 'most acknowledgments one POST /api/v1/ack/batch may carry; more is 413' },
  POP_MAX_BYTES: { schema: int(1024), default: String(8 * MiB), meaning: 'byte budget of one pop, fetch or DLQ page (at least one frame is always returned)' },
  SINK_QUEUES: { schema: z.string().regex(/^[^,\s][^,]*(,[^,\s][^,]*)*$/, 'must be a comma-separated list of queue names'), meaning: 'Workers: queues the cron-triggered archive sink copies to the SINK_BUCKET R2 binding (unset: no sink; on Node run `npm run sink`)' },
  SINK_NAME: { schema: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1 to 64 characters from A-Z a-z 0-9 . _ -'), default: 'archive', meaning: 'the archive sink\'s name: the queues\' retentionSinkHold and part of its kv pointer' },
  SINK_TENANT: { schema: z.string(), default: '', meaning: 'tenant of SINK_QUEUES' },
  SINK_PREFIX: { schema: z.string(), default: '', meaning: 'key prefix of the archive inside the bucket' },
  SINK_WINDOW_SECONDS: { schema: int(1, 86400), default: '60', meaning: 'archive window length; windows never straddle SINK_ALIGN' },
  SINK_LAYOUT: { schema: z.enum(['hive', 'legacy']), default: 'hive', meaning: 'hive: queue=/dt=/hour= keys query engines read as they are; legacy: the first per-partition gzip NDJSON layout (docs/sink.md)' },
  SINK_FORMAT: { schema: z.enum(['jsonl', 'parquet']), default: 'jsonl', meaning: 'hive layout: JSONL lines or Parquet (Snappy) rows' },
  SINK_COMPRESSION: { schema: z.enum(['gzip', 'zstd', 'none']), default: 'gzip', meaning: 'hive layout: JSONL gzip, zstd or none; Parquet pages zstd with zstd, else Snappy' },
  SINK_WINDOWS: { schema: z.enum(['queue', 'partition']), default: 'queue', meaning: 'hive layout: one object series per window for the queue, or per partition' },
  SINK_ALIGN: { schema: z.enum(['hour', 'day', 'none']), default: 'hour', meaning: 'hive layout: the boundary no window straddles (dt=/hour= come from the window start)' },
  SINK_MAX_FRAMES: { schema: int(1), default: '100000', meaning: 'frames per archive object part' },
  SINK_MAX_BYTES: { schema: int(1024), default: String(64 * MiB), meaning: 'encoded bytes (before compression) per archive object part' },
  AWS_ACCESS_KEYS: { schema: accessKeys, meaning: 'SigV4 keys of the SQS facade, `ACCESS_KEY_ID:SECRET:TENANT:ROLE,…` (TENANT may be empty); unset: the facade is off (docs/sqs.md)' },
  AWS_ACCOUNT_ID: { schema: z.string().regex(/^\d{12}$/, 'must be 12 digits'), default: '000000000000', meaning: 'the account id in the SQS facade\'s queue URLs and ARNs' },
  SQS_RECEIPT_SECRET: { schema: z.string().min(32, 'must be at least 32 characters'), meaning: 'key that signs SQS receipt handles, the same on every replica; unset: derived from AWS_ACCESS_KEYS, so changing a key voids handles in flight' },
  SQS_DEFAULT_WIDTH: { schema: int(1, 100_000), default: '64', meaning: 'partitions of a standard SQS queue created without `queen.partitions`; fixed per queue at CreateQueue (docs/sqs.md)' },
  LOG_LEVEL: { schema: z.enum(['debug', 'info', 'warn', 'error', 'silent']), default: 'info', meaning: 'structured JSON logs on stdout; secrets and connection strings are never logged' },
} satisfies Record<string, Variable>

export type VariableName = keyof typeof VARIABLES

type Parsed<N extends VariableName> = z.output<(typeof VARIABLES)[N]['schema']>

export type Config = {
  readonly [N in VariableName]: (typeof VARIABLES)[N] extends { default: unknown } ? Parsed<N> : Parsed<N> | undefined
} & { readonly runtime: Runtime }

export class ConfigError extends Error {
  constructor(readonly variable: string, reason: string) {
    super(`invalid configuration: ${variable} ${reason}`)
    this.name = 'ConfigError'
  }
}

/**
 * Parses the environment into a Config. An empty string counts as unset, so `FOO=` in a shell or
 * an empty Worker var falls back to the default. Throws ConfigError naming the first bad variable.
 */
export function loadConfig(env: Record<string, unknown>, runtime: Runtime): Config {
  const out: Record<string, unknown> = { runtime }
  for (const [name, variable] of Object.entries(VARIABLES) as [VariableName, Variable][]) {
    const raw = env[name]
    const given = typeof raw === 'string' && raw !== '' ? raw : undefined
    const fallback = typeof variable.default === 'object' ? variable.default[runtime] : variable.default
    const value = given ?? fallback
    if (value === undefined) continue
    const result = variable.schema.safeParse(value)
    if (!result.success) throw new ConfigError(name, result.error.issues[0]?.message ?? 'is invalid')
    out[name] = result.data
  }
  const config = out as Config
  checkAuthMaterial(config)
  return config
}

// Auth misconfiguration must stop the start (design decision 36), so no request can ever meet it.
function checkAuthMaterial(c: Config): void {
  if (!c.JWT_ENABLED) return
  const asymmetric = c.JWT_PUBLIC_KEY !== undefined || c.JWT_JWKS_URL !== undefined
  if (c.JWT_ALGORITHM === 'HS256' && c.JWT_SECRET === undefined) {
    throw new ConfigError('JWT_SECRET', 'is required when JWT_ALGORITHM is HS256')
  }
  if (/^(RS|Ed)/.test(c.JWT_ALGORITHM) && !asymmetric) {
    throw new ConfigError('JWT_PUBLIC_KEY', `or JWT_JWKS_URL is required when JWT_ALGORITHM is ${c.JWT_ALGORITHM}`)
  }
  if (c.JWT_ALGORITHM === 'auto' && !asymmetric && c.JWT_SECRET === undefined) {
    throw new ConfigError('JWT_ALGORITHM', 'auto needs JWT_SECRET, JWT_PUBLIC_KEY or JWT_JWKS_URL')
  }
  // HMAC-SHA256 is only as strong as its key; a short one falls to an offline guess of any token.
  const hs256 = c.JWT_ALGORITHM === 'HS256' || c.JWT_ALGORITHM === 'auto'
  if (hs256 && c.JWT_SECRET !== undefined && new TextEncoder().encode(c.JWT_SECRET).length < MIN_SECRET_BYTES) {
    throw new ConfigError('JWT_SECRET', `must be at least ${MIN_SECRET_BYTES} bytes for HS256 (e.g. \`openssl rand -base64 32\`)`)
  }
  // Keys fetched over plain http can be swapped by anyone on the path, forging every token.
  if (c.JWT_JWKS_URL !== undefined && !c.JWT_JWKS_ALLOW_HTTP) {
    const url = new URL(c.JWT_JWKS_URL)
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOCAL_HOSTS.has(url.hostname))) {
      throw new ConfigError('JWT_JWKS_URL', 'must be https:// (http:// only for localhost, or with JWT_JWKS_ALLOW_HTTP=true)')
    }
  }
}

const MIN_SECRET_BYTES = 32
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]'])

/** Meaning and printed default of each variable, for the README table and `--help`-style output. */
export function describeVariables(): { name: string; default: string; meaning: string }[] {
  return Object.entries(VARIABLES).map(([name, v]: [string, Variable]) => ({
    name,
    default:
      v.default === undefined ? 'unset' : typeof v.default === 'object' ? `${v.default.node} (Workers ${v.default.workers})` : v.default,
    meaning: v.meaning,
  }))
}
