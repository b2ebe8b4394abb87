// Encryption at rest (design decision 24): AES-256-GCM through WebCrypto, identical on Node and Workers.
// Only a message's `data` is encrypted; the stored frame carries {encrypted, iv, authTag, kid, v} (base64)
// and `enc: true`. `kid` names the key (first 8 hex of SHA-256 of it), so frames written under
// QUEEN_ENCRYPTION_KEY_PREVIOUS still decrypt during a rotation. Which queues are encrypted is
// src/messages/encryption-flags.ts's to remember.
//
// Frame format 2 (`v: 2`) binds the ciphertext to its tenant, queue and partition as AES-GCM
// associated data, so a ciphertext copied into another partition, queue or tenant (by anyone with
// write access to the tables) fails authentication instead of being served as that place's message.
// Frames without `v` were written before; they carry no associated data and still decrypt as they
// were written (docs/security.md).

export interface Envelope {
  encrypted: string
  iv: string
  authTag: string
  kid: string
  /** The frame format: 2 binds tenant, queue and partition; absent on frames written before. */
  v?: typeof FRAME_BOUND
}

/** Where a frame lives: its ciphertext is bound to these (frame format 2). */
export interface FrameBinding {
  tenant: string
  queue: string
  partition: string
}

const FRAME_BOUND = 2

// A JSON array: unambiguous whatever the names hold (no separator can be forged by a name).
const associatedData = (b: FrameBinding) => new TextEncoder().encode(JSON.stringify(['queen-frame', FRAME_BOUND, b.tenant, b.queue, b.partition]))

interface Key {
  kid: string
  key: CryptoKey
}

export interface Keyring {
  /** The key new frames are written with; null when QUEEN_ENCRYPTION_KEY is unset. */
  current: Key | null
  all: Key[]
}

const imported = new Map<string, Promise<Key>>()

function keyBytes(material: string): Uint8Array<ArrayBuffer> {
  if (/^[0-9a-fA-F]{64}$/.test(material)) {
    return Uint8Array.from(material.match(/../g)!.map((h) => parseInt(h, 16)))
  }
  return fromBase64(material)
}

function importKey(material: string): Promise<Key> {
  let key = imported.get(material)
  if (!key) {
    key = (async () => {
      const bytes = keyBytes(material)
      const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))
      const kid = Array.from(digest.slice(0, 4), (b) => b.toString(16).padStart(2, '0')).join('')
      return { kid, key: await crypto.subtle.importKey('raw', bytes, { name: 'AES-GCM' }, false, ['encrypt', 'decrypt']) }
    })()
    imported.set(material, key)
  }
  return key
}

export async function keyring(current: string | undefined, previous: string | undefined): Promise<Keyring> {
  const cur = current ? await importKey(current) : null
  const prev = previous ? await importKey(previous) : null
  return { current: cur, all: [cur, prev].filter((k): k is Key => k !== null) }
}

export async function encrypt(ring: Keyring, data: unknown, binding: FrameBinding): Promise<Envelope> {
  const key = ring.current
  if (!key) throw new Error('no encryption key')
  const iv = crypto.getRandomValues(new Uint8Array(12))
  const plain = new TextEncoder().encode(JSON.stringify(data))
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: associatedData(binding) }, key.key, plain))
  // WebCrypto appends the 16-byte tag; the envelope keeps it apart, as Queen's does.
  return {
    encrypted: toBase64(sealed.subarray(0, sealed.length - 16)),
    iv: toBase64(iv),
    authTag: toBase64(sealed.subarray(sealed.length - 16)),
    kid: key.kid,
    v: FRAME_BOUND,
  }
}

export type Decrypted = { ok: true; data: unknown } | { ok: false; reason: string }

/** Opens an envelope read at `binding`; a format-2 frame opens only there. */
export async function decrypt(ring: Keyring, envelope: unknown, binding: FrameBinding): Promise<Decrypted> {
  const e = envelope as Partial<Envelope> | null
  if (!e || typeof e.encrypted !== 'string' || typeof e.iv !== 'string' || typeof e.authTag !== 'string') {
    return { ok: false, reason: 'malformed encryption envelope' }
  }
  if (e.v !== undefined && e.v !== FRAME_BOUND) return { ok: false, reason: 'unknown encryption frame format' }
  const key = ring.all.find((k) => k.kid === e.kid) ?? (e.kid === undefined ? ring.current : undefined)
  if (!key) return { ok: false, reason: ring.all.length === 0 ? 'encryption key not configured' : 'unknown encryption key' }
  try {
    const body = fromBase64(e.encrypted)
    const tag = fromBase64(e.authTag)
    const sealed = new Uint8Array(body.length + tag.length)
    sealed.set(body)
    sealed.set(tag, body.length)
    const iv = fromBase64(e.iv)
    const params = e.v === FRAME_BOUND ? { name: 'AES-GCM', iv, additionalData: associatedData(binding) } : { name: 'AES-GCM', iv }
    const plain = await crypto.subtle.decrypt(params, key.key, sealed)
    return { ok: true, data: JSON.parse(new TextDecoder().decode(plain)) }
  } catch {
    return { ok: false, reason: 'decryption failed' }
  }
}

function toBase64(bytes: Uint8Array): string {
  let binary = ''
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  }
  return btoa(binary)
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text)
  const out = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i)
  return out
}
