// The checks `npm run deploy` makes before `wrangler deploy`, apart from wrangler itself so they
// can be tested. Secrets live in Cloudflare, not in the deploying shell: a secret already set
// there counts as present, though its value cannot be read back to validate.
import { ConfigError, loadConfig } from '../src/config.js'
import { loadStaticKeys } from '../src/http/jwt-keys.js'

/**
 * Stands in for a secret that is set in Cloudflare: present, value unknown. Long enough to pass
 * the length checks config applies to a value it can read (a JWT_SECRET needs 32 bytes), since the
 * real value is checked by the Worker at its start, not here.
 */
const SET_REMOTELY = '(set in Cloudflare: its value cannot be read back here)'

/** The `[vars]` of wrangler.toml as name → value (string values only, as the Worker reads them). */
export function wranglerVars(toml: string): Record<string, string> {
  const section = /^\[vars\]\s*$([\s\S]*?)(?=^\[|$(?![\s\S]))/m.exec(toml)?.[1] ?? ''
  const vars: Record<string, string> = {}
  for (const line of section.split('\n')) {
    const m = /^\s*([A-Z0-9_]+)\s*=\s*"([^"]*)"/.exec(line)
    if (m) vars[m[1]!] = m[2]!
  }
  return vars
}

/** True when wrangler.toml binds HYPERDRIVE (an uncommented [[hyperdrive]] table naming it). */
export function bindsHyperdrive(toml: string): boolean {
  return /^\[\[hyperdrive\]\][^[]*^\s*binding\s*=\s*"HYPERDRIVE"/m.test(toml)
}

/** True when wrangler.toml binds the archive sink's bucket (an uncommented [[r2_buckets]] table naming SINK_BUCKET). */
export function bindsSinkBucket(toml: string): boolean {
  return /^\[\[r2_buckets\]\][^[]*^\s*binding\s*=\s*"SINK_BUCKET"/m.test(toml)
}

/**
 * The reason the deploy must be refused, or null. `remoteSecrets` is the names `wrangler secret
 * list` printed, or null when wrangler could not tell (not logged in, no Worker yet): then only
 * what is known locally is checked.
 */
export async function deployRefusal(toml: string, env: Record<string, string | undefined>, remoteSecrets: ReadonlySet<string> | null): Promise<string | null> {
  const merged: Record<string, string | undefined> = { ...wranglerVars(toml), ...env }
  for (const name of remoteSecrets ?? []) merged[name] ??= SET_REMOTELY
  // QUEEN_DATABASES holds credentials, so it is a secret too; its JSON cannot be read back, so a
  // remote value counts as present and is validated by the Worker at its first event (design decision 36).
  if (merged.QUEEN_DATABASES === SET_REMOTELY) delete merged.QUEEN_DATABASES
  try {
    const config = loadConfig(merged, 'workers')
    // The PEM import the Worker does at its first event, done here so a bad key never ships; a key
    // that only Cloudflare holds cannot be read back, so it is checked at the edge instead (design decision 36).
    if (config.JWT_ENABLED && config.JWT_PUBLIC_KEY !== SET_REMOTELY) await loadStaticKeys(config)
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    return error.message
  }
  // A sink configured to archive into a bucket that is not bound would only log, every minute.
  if (merged.SINK_QUEUES && !bindsSinkBucket(toml)) {
    return 'SINK_QUEUES is set but wrangler.toml binds no R2 bucket as SINK_BUCKET ([[r2_buckets]], docs/sink.md)'
  }
  // What the Worker will see is Cloudflare's secret, so a DATABASE_URL in this shell does not count.
  if (remoteSecrets !== null && !remoteSecrets.has('DATABASE_URL') && !bindsHyperdrive(toml)) {
    return 'the DATABASE_URL secret is not set (npx wrangler secret put DATABASE_URL) and wrangler.toml binds no HYPERDRIVE'
  }
  return null
}
