// Tokens for tests, signed here with keys generated here: no fixture key ever leaves a test run.
import { SignJWT, exportJWK, exportPKCS8, exportSPKI, generateKeyPair, importPKCS8, type JWK, type JWTPayload } from 'jose'

export const SECRET = 'test-secret-that-is-long-enough-for-hs256!'

export interface KeyPair {
  alg: 'RS256' | 'RS384' | 'RS512' | 'EdDSA'
  privateKey: CryptoKey
  publicKey: CryptoKey
  pem: string
  /** The public key as a JWKS entry with this kid. */
  jwk(kid: string): Promise<JWK>
  /** The private key for another RS* hash (WebCrypto binds an RSA key to one hash). */
  signingKey(alg: string): Promise<CryptoKey>
}

export async function keyPair(alg: KeyPair['alg']): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  return {
    alg,
    privateKey,
    publicKey,
    pem: await exportSPKI(publicKey),
    jwk: async (kid) => ({ ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }),
    signingKey: async (other) => (other === alg ? privateKey : importPKCS8(await exportPKCS8(privateKey), other)),
  }
}

export const nowSeconds = () => Math.floor(Date.now() / 1000)

export interface SignOptions {
  alg?: string
  kid?: string
  key?: CryptoKey | Uint8Array
  /** Seconds from now; null leaves exp out. Default one hour. */
  expiresIn?: number | null
}

/** A signed token; HS256 with SECRET unless a key and algorithm are given. */
export async function token(claims: JWTPayload, options: SignOptions = {}): Promise<string> {
  const alg = options.alg ?? 'HS256'
  const key = options.key ?? new TextEncoder().encode(SECRET)
  const jwt = new SignJWT(claims).setProtectedHeader({ alg, typ: 'JWT', ...(options.kid ? { kid: options.kid } : {}) })
  if (claims.iat === undefined) jwt.setIssuedAt()
  const expiresIn = options.expiresIn === undefined ? 3600 : options.expiresIn
  if (expiresIn !== null && claims.exp === undefined) jwt.setExpirationTime(nowSeconds() + expiresIn)
  return jwt.sign(key)
}

/** An unsigned token (`alg: none`), which no configuration may accept. */
export function unsigned(claims: JWTPayload): string {
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ exp: nowSeconds() + 3600, ...claims })}.`
}

export const bearer = (jwt: string) => ({ authorization: `Bearer ${jwt}` })
