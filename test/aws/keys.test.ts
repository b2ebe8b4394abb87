import { describe, expect, it } from 'vitest'
import { parseAccessKeys, tenantOf, type AccessKey } from '../../src/aws/keys.js'

describe('AWS access keys', () => {
  it('parses ACCESS_KEY_ID:SECRET:TENANT:ROLE entries, an empty tenant meaning none', () => {
    const keys = parseAccessKeys('AKID1:secret-0123456789abcdef::admin, AKID2:secret-0123456789abcdef:acme:read-only')
    if (typeof keys === 'string') throw new Error(keys)
    expect(keys.get('AKID1')).toEqual({ accessKeyId: 'AKID1', secret: 'secret-0123456789abcdef', tenant: null, role: 'admin' })
    expect(keys.get('AKID2')?.tenant).toBe('acme')
    expect(keys.get('AKID2')?.role).toBe('read-only')
  })

  it('names what is wrong with a bad list', () => {
    expect(parseAccessKeys('AKID1:secret-0123456789abcdef:admin')).toMatch(/ACCESS_KEY_ID:SECRET:TENANT:ROLE/)
    expect(parseAccessKeys('AKID1:short::admin')).toMatch(/at least 16/)
    expect(parseAccessKeys('AKID1:secret-0123456789abcdef::root')).toMatch(/role/)
    expect(parseAccessKeys('AKID1:secret-0123456789abcdef::admin,AKID1:secret-0123456789abcdef::admin')).toMatch(/twice/)
    expect(parseAccessKeys(' , ')).toMatch(/at least one/)
  })

  it('gives a bound key its tenant, an unbound key the tenancy header, and refuses contradictions', () => {
    const bound: AccessKey = { accessKeyId: 'A1', secret: 's', tenant: 'acme', role: 'admin' }
    const unbound: AccessKey = { ...bound, tenant: null }
    const headers = (value?: string) => (name: string) => (name === 'x-tenant' ? value : undefined)
    expect(tenantOf(unbound, undefined, headers())).toBe('')
    expect(tenantOf(bound, undefined, headers())).toEqual({ refusal: expect.stringMatching(/no tenancy/) })
    expect(tenantOf(bound, 'x-tenant', headers())).toBe('acme')
    expect(tenantOf(bound, 'x-tenant', headers('other'))).toEqual({ refusal: expect.stringMatching(/bound to tenant acme/) })
    expect(tenantOf(unbound, 'x-tenant', headers('beta'))).toBe('beta')
    expect(tenantOf(unbound, 'x-tenant', headers())).toEqual({ refusal: expect.stringMatching(/no x-tenant header/) })
  })
})
