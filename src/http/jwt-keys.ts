// The static key material of JWT verification: JWT_SECRET for HS256 and the JWT_PUBLIC_KEY PEM
// for RS256/384/512 or EdDSA. Importing a PEM is asynchronous in WebCrypto, so it cannot happen
// inside loadConfig; instead each entry awaits loadStaticKeys before serving (Node at boot, the
// Worker at its first event), and a bad PEM stops the start naming JWT_PUBLIC_KEY (design decision 36).
import { importSPKI } from 'jose'
import { ConfigError, type Config } from '../config.js'

export const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'EdDSA'] as const
export type AsymmetricAlg = (typeof ASYMMETRIC)[number]
export type Alg = 'HS256' | AsymmetricAlg

export interface StaticKeys {
  secret?: Uint8Array
  /** The algorithms the PEM key verifies (RS* for an RSA key, EdDSA for Ed25519), each imported for it. */
  pem: ReadonlyMap<AsymmetricAlg, CryptoKey>
}

export async function loadStaticKeys(config: Config): Promise<StaticKeys> {
  const secret = config.JWT_SECRET === undefined ? undefined : new TextEncoder().encode(config.JWT_SECRET)
  const pem = new Map<AsymmetricAlg, CryptoKey>()
  if (config.JWT_PUBLIC_KEY !== undefined) {
    // A PEM may arrive with literal "\n" escapes from a one-line env var or a Worker secret.
    const text = config.JWT_PUBLIC_KEY.replace(/\\n/g, '\n')
    for (const alg of ASYMMETRIC) {
      // WebCrypto refuses an RSA key for Ed25519 and vice versa ("Invalid key type"), which is
      // exactly how the key's family is learnt.
      const key = await importSPKI(text, alg).catch(() => undefined)
      if (key) pem.set(alg, key)
    }
    if (pem.size === 0) throw new ConfigError('JWT_PUBLIC_KEY', 'is not a parsable RSA or Ed25519 public key (PEM "BEGIN PUBLIC KEY")')
    const fixed = config.JWT_ALGORITHM
    if (fixed !== 'auto' && fixed !== 'HS256' && !pem.has(fixed)) {
      throw new ConfigError('JWT_PUBLIC_KEY', `is not a key for JWT_ALGORITHM ${fixed}`)
    }
  }
  return { secret, pem }
}
