// Lease renewal (sql/procedures/008_log_renew.sql): never shortens a lease unless an item asks for an exact expiry.
import { z } from 'zod'
import { defineFamily, tenantScoped } from '../procedure.js'

const renewItemResult = z.object({
  index: z.number().int(),
  leaseId: z.string().nullable(),
  success: z.boolean(),
  error: z.string().nullable(),
  code: z.string().nullable(),
  expiresAt: z.string().nullable(),
  partitionsExtended: z.number().int(),
})

export const renewFamily = defineFamily({
  /** Extends each named lease to at least `seconds` from now (exactly `seconds` from now with `exact`); one result per item. */
  log_renew_v1: tenantScoped<{ tenant: string; items: { index: number; leaseId: string; seconds: number; exact?: boolean }[]; now?: Date }>({
    tenant: 'text',
    items: 'jsonb',
    now: 'timestamptz',
  }).returns(z.array(renewItemResult)),
})
