// Receipt handles: everything a later DeleteMessage or ChangeMessageVisibility needs (queue,
// partition, transaction, offset, lease), signed with HMAC-SHA256 under a key every replica and
// Worker shares, so any of them accepts any handle and none can be forged or pointed elsewhere.
import { hmac } from '../aws/sigv4.js'

export interface Receipt {
  queue: string
  partitionId: string
  transactionId: string
  offset: number
  leaseId: string
  messageId: string
}

const VERSION = 1
const utf8 = new TextEncoder()

function base64url(bytes: Uint8Array): string {
  let binary = ''
  for (const b of bytes) binary += String.fromCharCode(b)
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

function fromBase64url(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null
  try {
    return Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (ch) => ch.charCodeAt(0))
  } catch {
    return null
  }
}

export async function signReceipt(secret: Uint8Array<ArrayBuffer>, r: Receipt): Promise<string> {
  const body = base64url(utf8.encode(JSON.stringify([VERSION, r.queue, r.partitionId, r.transactionId, r.offset, r.leaseId, r.messageId])))
  const mac = base64url(new Uint8Array(await hmac(secret, body)))
  return `${body}.${mac}`
}

/** The receipt a handle names, or null for anything this broker did not sign. */
export async function openReceipt(secret: Uint8Array<ArrayBuffer>, handle: string): Promise<Receipt | null> {
  const dot = handle.indexOf('.')
  if (dot <= 0 || handle.length > 4096) return null
  const body = handle.slice(0, dot)
  const expected = base64url(new Uint8Array(await hmac(secret, body)))
  const given = handle.slice(dot + 1)
  let diff = expected.length ^ given.length
  for (let i = 0; i < Math.max(expected.length, given.length); i++) diff |= (expected.charCodeAt(i) || 0) ^ (given.charCodeAt(i) || 0)
  if (diff !== 0) return null
  const bytes = fromBase64url(body)
  if (bytes === null) return null
  const fields = JSON.parse(new TextDecoder().decode(bytes)) as unknown[]
  if (!Array.isArray(fields) || fields[0] !== VERSION) return null
  const [, queue, partitionId, transactionId, offset, leaseId, messageId] = fields as [number, string, string, string, number, string, string]
  return { queue, partitionId, transactionId, offset, leaseId, messageId }
}

/** The signing key: SQS_RECEIPT_SECRET, or one derived from the configured access keys. */
export async function receiptKey(configured: string | undefined, accessKeySecrets: readonly string[]): Promise<Uint8Array<ArrayBuffer>> {
  if (configured !== undefined) return utf8.encode(configured)
  const material = ['queen-sqs-receipt', ...[...accessKeySecrets].sort()].join('\n')
  return new Uint8Array(await crypto.subtle.digest('SHA-256', utf8.encode(material)))
}
