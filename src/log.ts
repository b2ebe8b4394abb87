// Structured JSON logs, one line per event on stdout. Callers pass fields, never secrets: the
// request logger records id, method, route pattern, status and duration only.
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent'

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 }

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void
  info(msg: string, fields?: Record<string, unknown>): void
  warn(msg: string, fields?: Record<string, unknown>): void
  error(msg: string, fields?: Record<string, unknown>): void
}

export function createLogger(level: LogLevel, write: (line: string) => void = (line) => console.log(line)): Logger {
  const emit = (at: Exclude<LogLevel, 'silent'>) => (msg: string, fields?: Record<string, unknown>) => {
    if (RANK[at] < RANK[level]) return
    write(JSON.stringify({ level: at, time: new Date().toISOString(), msg, ...fields }))
  }
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') }
}

/** The fields worth logging about a failure, without driver detail that could carry a host name. */
export function describeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { error: String(error) }
  const sqlstate = (error as { sqlstate?: unknown }).sqlstate
  return { error: error.message, errorName: error.name, ...(sqlstate ? { sqlstate } : {}), stack: error.stack }
}
