// The SigV4 access keys this broker accepts (AWS_ACCESS_KEYS) and the principal each one is: a key
// is this broker's equivalent of a token, carrying one role and, with tenancy on, one tenant.
//
// Format: comma-separated `ACCESS_KEY_ID:SECRET:TENANT:ROLE`; TENANT may be empty (`AKID:secret::admin`),
// ROLE is admin, read-write, read-only or write-only. docs/aws-keys.md says how tenancy applies.
import { ROLES, type Role } from '../http/auth.js'

export interface AccessKey {
  accessKeyId: string
  secret: string
  /** The tenant the key is bound to, or null for a key that names none. */
  tenant: string | null
  role: Role
}

export type AccessKeys = ReadonlyMap<string, AccessKey>

const KEY_ID = /^[A-Za-z0-9]{4,128}$/
const TENANT = /^[A-Za-z0-9._-]{1,128}$/

/** Parses the variable; returns a message naming the first bad entry instead of throwing. */
export function parseAccessKeys(value: string): AccessKeys | string {
  const keys = new Map<string, AccessKey>()
  for (const raw of value.split(',')) {
    const entry = raw.trim()
    if (entry === '') continue
    const parts = entry.split(':')
    if (parts.length !== 4) return 'entries must be ACCESS_KEY_ID:SECRET:TENANT:ROLE (TENANT may be empty)'
    const [accessKeyId = '', secret = '', tenant = '', role = ''] = parts
    if (!KEY_ID.test(accessKeyId)) return `access key id ${JSON.stringify(accessKeyId)} must be 4-128 letters and digits`
    if (secret.length < 16) return `the secret of ${accessKeyId} must be at least 16 characters`
    if (tenant !== '' && !TENANT.test(tenant)) return `the tenant of ${accessKeyId} must be 1-128 characters of A-Z a-z 0-9 . _ -`
    if (!(ROLES as readonly string[]).includes(role)) return `the role of ${accessKeyId} must be one of ${ROLES.join(', ')}`
    if (keys.has(accessKeyId)) return `access key id ${accessKeyId} is listed twice`
    keys.set(accessKeyId, { accessKeyId, secret, tenant: tenant === '' ? null : tenant, role: role as Role })
  }
  if (keys.size === 0) return 'must list at least one key'
  return keys
}

/**
 * The tenant a verified key acts for. A key bound to a tenant is that tenant (an AWS SDK sends no
 * tenancy header); an unbound key takes the tenancy header's value, as a token without a tenant
 * claim does; with tenancy off every request is tenant ''.
 */
export function tenantOf(key: AccessKey, tenancyHeader: string | undefined, header: (name: string) => string | undefined): string | { refusal: string } {
  if (tenancyHeader === undefined) return key.tenant === null ? '' : { refusal: `access key ${key.accessKeyId} is bound to a tenant, but this broker has no tenancy` }
  if (key.tenant !== null) {
    const asked = header(tenancyHeader)
    if (asked !== undefined && asked !== '' && asked !== key.tenant) return { refusal: `access key ${key.accessKeyId} is bound to tenant ${key.tenant}` }
    return key.tenant
  }
  const asked = header(tenancyHeader)
  if (asked === undefined || asked === '') return { refusal: `access key ${key.accessKeyId} names no tenant and the request has no ${tenancyHeader} header` }
  if (!TENANT.test(asked)) return { refusal: `tenant header ${tenancyHeader} must be 1-128 characters of A-Z a-z 0-9 . _ -` }
  return asked
}
