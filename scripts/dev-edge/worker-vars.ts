// What `npm run dev:edge` hands the Worker: every variable of the broker's configuration schema
// (src/config.ts) that is set in the shell, so the local Worker is configured exactly as `npm start`
// would be by the same shell, plus the database it resolved and, for a loopback database, the
// WebSocket bridge. Nothing else of the environment reaches the Worker.
import { VARIABLES } from '../../src/config.js'

export function workerVars(env: Record<string, string | undefined>, databaseUrl: string, wsProxy?: string): Record<string, string> {
  const vars: Record<string, string> = {}
  for (const name of Object.keys(VARIABLES)) {
    // An empty value counts as unset, as loadConfig reads it.
    const value = env[name]
    if (value !== undefined && value !== '') vars[name] = value
  }
  // The embedded server's URL when DATABASE_URL is unset: the Worker has no embedded server.
  vars.DATABASE_URL = databaseUrl
  if (wsProxy !== undefined) vars.NEON_WS_PROXY = wsProxy
  return vars
}

export class UnwritableVariable extends Error {
  override name = 'UnwritableVariable'
}

/**
 * One line of the env file wrangler reads with `--env-file` (dotenv's format, then dotenv-expand).
 * Values must arrive byte for byte: PEM keys span lines, secrets may hold quotes, `#` or `$`. A
 * single- or backtick-quoted value is taken literally and may span lines; a double-quoted one turns
 * `\n` into a newline, so it is the last choice. Every `$` is written `\$`, which the expansion
 * step turns back into `$` instead of reading it as a variable reference.
 */
export function envFileLine(name: string, value: string): string {
  const escaped = value.replaceAll('$', '\\$')
  const quote = ["'", '`', '"'].find((q) => !value.includes(q) && (q !== '"' || !/\\[nr]/.test(value)))
  if (quote === undefined) {
    throw new UnwritableVariable(`${name} holds every quote character wrangler's env file knows ('  \`  "); it cannot be passed to wrangler dev exactly`)
  }
  return `${name}=${quote}${escaped}${quote}\n`
}

export function envFile(vars: Record<string, string>): string {
  return Object.entries(vars)
    .map(([name, value]) => envFileLine(name, value))
    .join('')
}
