// A JWKS endpoint as a key source (docs/auth.md): keys cached 10 minutes; a token whose `kid` is not
// in the cache forces at most one refetch per 30 s; when a refetch fails, keys already cached stay
// usable for a bounded grace (JWT_JWKS_MAX_STALE_SECONDS past their freshness: a key the issuer
// revoked must not verify forever because its endpoint is down), and with no usable key the request
// gets 503 jwks_unavailable.
//
// jose's createRemoteJWKSet is close but not this: its cooldown counts from the last successful
// fetch (so a key rotated in right after the first fetch is refused for 30 s), a failed refresh of
// a stale cache fails the request although the cached keys still verify, and its clock cannot be
// injected, which the rotation test needs. Key selection within a set is still jose's
// createLocalJWKSet (kid, kty, alg and use matching).
import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose'

export const JWKS_CACHE_MS = 10 * 60_000
export const JWKS_COOLDOWN_MS = 30_000
const FETCH_TIMEOUT_MS = 5_000

export class JwksUnavailable extends Error {
  constructor(cause: unknown) {
    super('Failed to fetch JWKS', { cause })
    this.name = 'JwksUnavailable'
  }
}

export interface RemoteKeySetOptions {
  /** Milliseconds since the epoch; injectable so cache expiry and cooldown are tested without sleeping. */
  now?: () => number
  fetch?: typeof fetch
  /**
   * Let concurrent requests share one in-flight fetch. Off on Workers: a promise started by one
   * request's I/O must not be awaited by another request (workerd may cancel or refuse it).
   */
  shareInFlight?: boolean
  /** How long past JWKS_CACHE_MS cached keys still verify while refreshing fails; unbounded when unset. */
  maxStaleMs?: number
  /** Told when a refresh failed but cached keys were kept (never given the URL's secrets or a token). */
  onStale?: (error: unknown) => void
}

type LocalSet = ReturnType<typeof createLocalJWKSet>

export function remoteKeySet(url: string, options: RemoteKeySetOptions = {}): JWTVerifyGetKey {
  const now = options.now ?? Date.now
  const fetchJwks = options.fetch ?? ((input, init) => fetch(input, init))
  let local: LocalSet | undefined
  let fetchedAt = -Infinity
  let lastForced = -Infinity
  let inFlight: Promise<void> | undefined

  const load = async (): Promise<void> => {
    let res: Response
    try {
      res = await fetchJwks(url, {
        method: 'GET',
        redirect: 'manual',
        headers: { accept: 'application/json, application/jwk-set+json' },
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      })
    } catch (error) {
      throw new JwksUnavailable(error)
    }
    if (res.status !== 200) throw new JwksUnavailable(new Error(`JWKS endpoint answered ${res.status}`))
    try {
      local = createLocalJWKSet((await res.json()) as JSONWebKeySet)
    } catch (error) {
      throw new JwksUnavailable(error)
    }
    fetchedAt = now()
  }

  const refresh = (): Promise<void> => {
    if (!options.shareInFlight) return load()
    inFlight ??= load().finally(() => (inFlight = undefined))
    return inFlight
  }

  return async (header, token) => {
    let fetchedNow = false
    if (local === undefined || now() - fetchedAt >= JWKS_CACHE_MS) {
      try {
        await refresh()
        fetchedNow = true
      } catch (error) {
        if (local === undefined) throw error
        if (options.maxStaleMs !== undefined && now() - fetchedAt >= JWKS_CACHE_MS + options.maxStaleMs) throw error
        options.onStale?.(error)
      }
    }
    try {
      return await local!(header, token)
    } catch (error) {
      // An unknown kid is the one miss a refetch can cure (a rotated-in key); once per cooldown.
      if (!(error instanceof errors.JWKSNoMatchingKey) || fetchedNow || now() - lastForced < JWKS_COOLDOWN_MS) throw error
      lastForced = now()
      await refresh()
      return local!(header, token)
    }
  }
}
