import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { ConfigError, VARIABLES, loadConfig } from '../src/config.js'

describe('configuration', () => {
  it('has the documented defaults, per runtime where they differ', () => {
    const node = loadConfig({}, 'node')
    expect(node).toMatchObject({ PORT: 6632, HOST: '127.0.0.1', DB_POOL_SIZE: 10, MAX_POP_WAIT_MS: 30000, MAX_BODY_BYTES: 16777216, STATEMENT_TIMEOUT_MS: 25000, DEDUP_PURGE_INTERVAL_MS: 300000 })
    expect(node.DATABASE_URL).toBeUndefined()
    const workers = loadConfig({}, 'workers')
    expect(workers).toMatchObject({ MAX_POP_WAIT_MS: 25000, MAX_BODY_BYTES: 8388608 })
  })

  it('names the variable when a value is invalid', () => {
    const cases: Record<string, string> = {
      PORT: 'abc',
      DB_POOL_SIZE: '0',
      STATEMENT_TIMEOUT_MS: '60001',
      JWT_ENABLED: 'yes',
      QUEEN_ENCRYPTION_KEY: 'short',
      DEFAULT_SUBSCRIPTION_MODE: 'latest',
      QUEEN_TENANCY_HEADER: 'bad header',
      JWT_SKIP_PATHS: '/health,metrics',
    }
    for (const [name, value] of Object.entries(cases)) {
      expect(() => loadConfig({ [name]: value }, 'node'), name).toThrow(ConfigError)
      expect(() => loadConfig({ [name]: value }, 'node'), name).toThrow(new RegExp(`^invalid configuration: ${name} `))
    }
  })

  it('accepts a 32-byte encryption key as hex or base64', () => {
    expect(loadConfig({ QUEEN_ENCRYPTION_KEY: 'ab'.repeat(32) }, 'node').QUEEN_ENCRYPTION_KEY).toBe('ab'.repeat(32))
    const b64 = Buffer.alloc(32, 7).toString('base64')
    expect(loadConfig({ QUEEN_ENCRYPTION_KEY: b64 }, 'node').QUEEN_ENCRYPTION_KEY).toBe(b64)
    expect(() => loadConfig({ QUEEN_ENCRYPTION_KEY: Buffer.alloc(16).toString('base64') }, 'node')).toThrow(/QUEEN_ENCRYPTION_KEY/)
  })

  it('refuses an HS256 secret shorter than 32 bytes, saying so, and only where HS256 can use it', () => {
    for (const alg of ['HS256', 'auto']) {
      expect(() => loadConfig({ JWT_ENABLED: 'true', JWT_ALGORITHM: alg, JWT_SECRET: 'x'.repeat(31) }, 'node'), alg).toThrow(/^invalid configuration: JWT_SECRET must be at least 32 bytes for HS256/)
    }
    expect(loadConfig({ JWT_ENABLED: 'true', JWT_SECRET: 'x'.repeat(32) }, 'node').JWT_SECRET).toHaveLength(32)
    // Counted in bytes: 11 three-byte characters are 33 bytes.
    expect(loadConfig({ JWT_ENABLED: 'true', JWT_SECRET: '€'.repeat(11) }, 'node').JWT_ENABLED).toBe(true)
    // With auth off the secret is never used, so it is not judged.
    expect(loadConfig({ JWT_SECRET: 's' }, 'node').JWT_ENABLED).toBe(false)
  })

  it('fetches a JWKS only over https, or http to localhost, or with JWT_JWKS_ALLOW_HTTP', () => {
    const jwks = (url: string, extra: Record<string, string> = {}) => () => loadConfig({ JWT_ENABLED: 'true', JWT_ALGORITHM: 'RS256', JWT_JWKS_URL: url, ...extra }, 'node')
    expect(jwks('http://issuer.example/jwks')).toThrow(/^invalid configuration: JWT_JWKS_URL must be https/)
    expect(jwks('ftp://issuer.example/jwks')).toThrow(/JWT_JWKS_URL/)
    for (const ok of ['https://issuer.example/jwks', 'http://localhost:8080/jwks', 'http://127.0.0.1:9/jwks', 'http://[::1]:9/jwks']) expect(jwks(ok), ok).not.toThrow()
    expect(jwks('http://issuer.internal/jwks', { JWT_JWKS_ALLOW_HTTP: 'true' })).not.toThrow()
  })

  it('refuses auth switched on without key material', () => {
    expect(() => loadConfig({ JWT_ENABLED: 'true' }, 'node')).toThrow(/JWT_SECRET/)
    expect(() => loadConfig({ JWT_ENABLED: 'true', JWT_ALGORITHM: 'RS256' }, 'node')).toThrow(/JWT_PUBLIC_KEY/)
    expect(() => loadConfig({ JWT_ENABLED: 'true', JWT_ALGORITHM: 'EdDSA', JWT_SECRET: 's' }, 'node')).toThrow(/JWT_PUBLIC_KEY/)
    expect(() => loadConfig({ JWT_ENABLED: 'true', JWT_ALGORITHM: 'auto' }, 'node')).toThrow(/^invalid configuration: JWT_ALGORITHM /)
    expect(loadConfig({ JWT_ENABLED: 'true', JWT_ALGORITHM: 'auto', JWT_JWKS_URL: 'https://issuer.example/jwks' }, 'node').JWT_ALGORITHM).toBe('auto')
  })

  it('treats an empty value as unset', () => {
    expect(loadConfig({ PORT: '' }, 'node').PORT).toBe(6632)
  })

  it('is documented in full in the README configuration table', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
    for (const name of Object.keys(VARIABLES)) expect(readme, name).toContain(`\`${name}\``)
  })
})
