// Stored frames as a reader sees them (design decision 24): an `enc` payload is decrypted with the
// current or previous key; one that fails authentication is answered with data null and a
// decryptError, so a single bad frame never blocks a page. Used by every read of frames. Each frame
// is opened where it was read (`where`: its tenant, queue and partition), which a frame written in
// format 2 is bound to (src/encryption.ts).
import type { Config } from './config.js'
import { decrypt, keyring, type FrameBinding } from './encryption.js'

export type Revealed<F> = Omit<F, 'enc'> & { decryptError?: string }

export async function reveal<F extends { enc: boolean; data: unknown }>(
  config: Config,
  frames: readonly F[],
  where: (frame: F) => FrameBinding,
): Promise<Revealed<F>[]> {
  const ring = frames.some((f) => f.enc) ? await keyring(config.QUEEN_ENCRYPTION_KEY, config.QUEEN_ENCRYPTION_KEY_PREVIOUS) : null
  return Promise.all(
    frames.map(async (whole) => {
      const { enc, ...frame } = whole
      if (!enc) return frame
      const plain = await decrypt(ring!, frame.data, where(whole))
      return plain.ok ? { ...frame, data: plain.data } : { ...frame, data: null, decryptError: plain.reason }
    }),
  )
}
