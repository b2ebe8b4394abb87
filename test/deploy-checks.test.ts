// What `npm run deploy` refuses before wrangler runs (scripts/deploy-checks.ts). Secrets set in
// Cloudflare count as present: a Hyperdrive-only or JWT deploy must not need them in the shell.
import { describe, expect, it } from 'vitest'
import { bindsHyperdrive, deployRefusal } from '../scripts/deploy-checks.js'

const VARS = '[vars]\nLOG_LEVEL = "info"\n'
const JWT_VARS = '[vars]\nJWT_ENABLED = "true"\nJWT_ALGORITHM = "HS256"\n'
const HYPERDRIVE = `${VARS}\n[[hyperdrive]]\nbinding = "HYPERDRIVE"\nid = "abc"\n`

describe('deploy checks', () => {
  it('passes with DATABASE_URL set in Cloudflare', async () => {
    expect(await deployRefusal(VARS, {}, new Set(['DATABASE_URL']))).toBeNull()
  })

  it('refuses without DATABASE_URL in Cloudflare, even when this shell has one', async () => {
    expect(await deployRefusal(VARS, { DATABASE_URL: 'postgres://local/db' }, new Set())).toMatch(/DATABASE_URL secret is not set/)
  })

  it('accepts a Hyperdrive binding instead of DATABASE_URL, but not a commented-out one', async () => {
    expect(bindsHyperdrive(HYPERDRIVE)).toBe(true)
    expect(bindsHyperdrive(`${VARS}# [[hyperdrive]]\n# binding = "HYPERDRIVE"\n`)).toBe(false)
    expect(await deployRefusal(HYPERDRIVE, {}, new Set())).toBeNull()
  })

  it('counts a QUEEN_DATABASES secret in Cloudflare as present, and refuses a bad local one naming it', async () => {
    expect(await deployRefusal(VARS, {}, new Set(['DATABASE_URL', 'QUEEN_DATABASES']))).toBeNull()
    expect(await deployRefusal(VARS, { QUEEN_DATABASES: 'eu=postgres://x' }, new Set(['DATABASE_URL']))).toMatch(/QUEEN_DATABASES/)
  })

  it('counts a JWT_SECRET set in Cloudflare as present, and refuses when it is set nowhere', async () => {
    expect(await deployRefusal(JWT_VARS, {}, new Set(['DATABASE_URL', 'JWT_SECRET']))).toBeNull()
    expect(await deployRefusal(JWT_VARS, {}, new Set(['DATABASE_URL']))).toMatch(/JWT_SECRET/)
  })

  it('still imports a public key given locally, so a bad PEM never ships', async () => {
    const rs = '[vars]\nJWT_ENABLED = "true"\nJWT_ALGORITHM = "RS256"\n'
    expect(await deployRefusal(rs, { JWT_PUBLIC_KEY: 'not a pem' }, new Set(['DATABASE_URL']))).toMatch(/JWT_PUBLIC_KEY/)
    expect(await deployRefusal(rs, {}, new Set(['DATABASE_URL', 'JWT_PUBLIC_KEY']))).toBeNull()
  })

  it('checks only local values when wrangler cannot list secrets', async () => {
    expect(await deployRefusal(VARS, {}, null)).toBeNull()
    expect(await deployRefusal('[vars]\nLOG_LEVEL = "loud"\n', {}, null)).toMatch(/LOG_LEVEL/)
  })

  it('refuses SINK_QUEUES without an R2 bucket bound as SINK_BUCKET, commented-out ones included', async () => {
    const sink = '[vars]\nSINK_QUEUES = "orders,events"\n'
    expect(await deployRefusal(sink, {}, new Set(['DATABASE_URL']))).toMatch(/SINK_BUCKET/)
    expect(await deployRefusal(`${sink}\n# [[r2_buckets]]\n# binding = "SINK_BUCKET"\n`, {}, new Set(['DATABASE_URL']))).toMatch(/SINK_BUCKET/)
    expect(await deployRefusal(`${sink}\n[[r2_buckets]]\nbinding = "SINK_BUCKET"\nbucket_name = "archive"\n`, {}, new Set(['DATABASE_URL']))).toBeNull()
    expect(await deployRefusal('[vars]\nSINK_QUEUES = ",bad"\n', {}, null)).toMatch(/SINK_QUEUES/)
  })
})
