// JWT authentication (docs/auth.md) as an Authenticator: skip paths, the Bearer token, the
// algorithm policy, signature and claim checks by jose, then the principal. Every refusal is a
// 401 with a fixed text; a token's content is never logged or echoed (only its header's `alg`
// and `kid`, which the refusal texts name, shortened and made printable).
import { decodeProtectedHeader, errors, jwtVerify, type JWTVerifyGetKey, type ProtectedHeaderParameters } from 'jose'
import type { Config } from '../config.js'
import { HttpError } from '../errors.js'
import type { Logger } from '../log.js'
import { ANONYMOUS, type Authenticator } from './auth.js'
import { remoteKeySet, JwksUnavailable } from './jwks.js'
import { ASYMMETRIC, loadStaticKeys, type StaticKeys } from './jwt-keys.js'
import { ClaimError, principalFromClaims, roleNames } from './jwt-principal.js'
import { isSkipped, parseSkipPaths } from './skip-paths.js'

export interface JwtOptions {
  /** Milliseconds since the epoch, for exp/nbf/iat and the JWKS cache; injectable for tests. */
  now?: () => number
  fetch?: typeof fetch
  log?: Logger
}

const unauthenticated = () =>
  new HttpError(401, 'unauthenticated', 'Authentication required', {}, { 'WWW-Authenticate': 'Bearer' })

const invalidToken = (message: string) =>
  new HttpError(401, 'invalid_token', message, {}, { 'WWW-Authenticate': 'Bearer error="invalid_token"' })

// Header values are attacker-chosen; they appear in messages only shortened and printable.
const shown = (value: unknown) => String(value).slice(0, 64).replace(/[^\x20-\x7e]/g, '?')

/** The token of `Authorization: Bearer <jwt>` (prefix case-insensitive) or of a bare token; cookies are never read. */
function bearerToken(header: string | undefined): string | undefined {
  const value = header?.trim() ?? ''
  if (value === '' || /^bearer$/i.test(value)) return undefined
  const prefixed = /^bearer\s+(\S+)$/i.exec(value)
  if (prefixed) return prefixed[1]
  if (/\s/.test(value)) throw invalidToken('Token decode error: Authorization is not a Bearer token')
  return value
}

function protectedHeader(token: string): ProtectedHeaderParameters & { alg: string } {
  let header: ProtectedHeaderParameters
  try {
    header = decodeProtectedHeader(token)
  } catch {
    throw invalidToken('Token decode error: malformed token header')
  }
  if (typeof header.alg !== 'string') throw invalidToken('Token decode error: token header has no alg')
  return header as ProtectedHeaderParameters & { alg: string }
}

type VerifyKey = Parameters<typeof jwtVerify>[1]
type VerifyOptions = NonNullable<Parameters<typeof jwtVerify>[2]>

// A kid-less token checked against a JWKS that holds several keys of its type (mid-rotation)
// matches them all; jose hands them over as an iterator, and the one that verifies is the signer.
async function verify(token: string, key: VerifyKey, options: VerifyOptions) {
  try {
    return await jwtVerify(token, key, options)
  } catch (error) {
    if (!(error instanceof errors.JWKSMultipleMatchingKeys)) throw error
    for await (const candidate of error) {
      try {
        return await jwtVerify(token, candidate, options)
      } catch (each) {
        if (!(each instanceof errors.JWSSignatureVerificationFailed)) throw each
      }
    }
    throw new errors.JWSSignatureVerificationFailed()
  }
}

export function jwtAuthenticator(config: Config, options: JwtOptions = {}): Authenticator {
  const now = options.now ?? Date.now
  const skip = parseSkipPaths(config.JWT_SKIP_PATHS)
  const names = roleNames(config)
  const jwks =
    config.JWT_JWKS_URL === undefined
      ? undefined
      : remoteKeySet(config.JWT_JWKS_URL, {
          now,
          fetch: options.fetch,
          shareInFlight: config.runtime === 'node',
          maxStaleMs: config.JWT_JWKS_MAX_STALE_SECONDS * 1000,
          onStale: () => options.log?.warn('JWKS refresh failed; verifying with the cached keys'),
        })
  // Imported once, on first use; the entries have already awaited loadStaticKeys (see jwt-keys.ts).
  let staticKeys: Promise<StaticKeys> | undefined

  // The verifier is chosen from the token's `alg` only among configured key material; `none` and
  // any algorithm but HS256, RS256/384/512 and EdDSA never have one.
  function keyFor(header: ProtectedHeaderParameters & { alg: string }, keys: StaticKeys): Uint8Array | CryptoKey | JWTVerifyGetKey {
    const alg = header.alg
    if (config.JWT_ALGORITHM !== 'auto' && alg !== config.JWT_ALGORITHM) {
      throw invalidToken(`Token uses ${shown(alg)}, expected ${config.JWT_ALGORITHM}`)
    }
    if (alg === 'HS256' && keys.secret) return keys.secret
    const asymmetric = ASYMMETRIC.find((a) => a === alg)
    if (asymmetric) {
      // With both a PEM and a JWKS configured, a token naming a kid is looked up in the JWKS.
      const pem = keys.pem.get(asymmetric)
      if (jwks && (header.kid !== undefined || !pem)) return jwks
      if (pem) return pem
    }
    throw invalidToken(`Unsupported algorithm: ${shown(alg)}`)
  }

  function refusal(error: unknown, header: ProtectedHeaderParameters): unknown {
    if (error instanceof HttpError) return error
    if (error instanceof JwksUnavailable) {
      options.log?.warn('JWKS fetch failed', { reason: error.cause instanceof Error ? error.cause.name : 'unknown' })
      return new HttpError(503, 'jwks_unavailable', 'Failed to fetch JWKS')
    }
    if (error instanceof ClaimError) return invalidToken(`Token decode error: ${error.message}`)
    if (error instanceof errors.JWTExpired) return invalidToken('Token has expired')
    if (error instanceof errors.JWTClaimValidationFailed) {
      if (error.claim === 'exp' && error.reason === 'missing') return invalidToken('Token has no expiry (exp), which this broker requires')
      if (error.claim === 'iss') return invalidToken('Invalid token issuer')
      if (error.claim === 'aud') return invalidToken('Invalid token audience')
      if ((error.claim === 'nbf' || error.claim === 'iat') && error.reason === 'check_failed') return invalidToken('Token not yet valid')
      return invalidToken(`Token decode error: ${error.message}`)
    }
    if (error instanceof errors.JWSSignatureVerificationFailed) return invalidToken('Invalid token signature')
    if (error instanceof errors.JWKSNoMatchingKey) return invalidToken(`Unknown key ID: ${shown(header.kid ?? '(none)')}`)
    if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) {
      return invalidToken(`Unsupported algorithm: ${shown(header.alg)}`)
    }
    if (error instanceof errors.JOSEError) return invalidToken(`Token decode error: ${error.message}`)
    return error
  }

  return async (c) => {
    if (isSkipped(c.req.path, skip)) return ANONYMOUS
    const token = bearerToken(c.req.header('authorization'))
    if (token === undefined) throw unauthenticated()
    const header = protectedHeader(token)
    staticKeys ??= loadStaticKeys(config)
    try {
      const key = keyFor(header, await staticKeys)
      const at = now()
      const { payload } = await verify(token, key as VerifyKey, {
        algorithms: [header.alg],
        issuer: config.JWT_ISSUER,
        audience: config.JWT_AUDIENCE,
        clockTolerance: config.JWT_CLOCK_SKEW,
        currentDate: new Date(at),
        // JWT_REQUIRE_EXP: without exp a leaked token is valid forever.
        requiredClaims: config.JWT_REQUIRE_EXP ? ['exp'] : [],
      })
      // jose checks iat only against a maximum age; an iat in the future beyond the skew is
      // refused too, as docs/auth.md promises.
      if (typeof payload.iat === 'number' && payload.iat > at / 1000 + config.JWT_CLOCK_SKEW) throw invalidToken('Token not yet valid')
      return principalFromClaims(payload, config, names)
    } catch (error) {
      throw refusal(error, header)
    }
  }
}
