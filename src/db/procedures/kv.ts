// Tenant-scoped key/value pointers (sql/procedures/020_kv.sql).
import { z } from 'zod'
import { defineFamily, tenantScoped } from '../procedure.js'

const kvEntry = z.object({ key: z.string(), value: z.unknown(), updatedAt: z.string() })

export const kvFamily = defineFamily({
  /** Writes one key/value pointer of the tenant. */
  kv_put_v1: tenantScoped<{ tenant: string; key: string; value: unknown; now?: Date }>({ tenant: 'text', key: 'text', value: 'jsonb', now: 'timestamptz' }).returns(
    kvEntry,
  ),
  /** Reads one key/value pointer of the tenant; QMNFK when absent. */
  kv_get_v1: tenantScoped<{ tenant: string; key: string }>({ tenant: 'text', key: 'text' }).returns(kvEntry),
  /** Deletes one key/value pointer of the tenant. */
  kv_delete_v1: tenantScoped<{ tenant: string; key: string }>({ tenant: 'text', key: 'text' }).returns(z.object({ deleted: z.boolean() })),
})
