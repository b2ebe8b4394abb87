// `npm run dev:edge` runs the broker `npm start` would run from the same shell: the Worker gets
// every configuration variable of src/config.ts that is set (and nothing else of the environment),
// the env file carries each value exactly, and scheduled() fires on wrangler.toml's cron cadence.
// The wrangler run itself is exercised by hand (docs/edge.md); these check what it is fed.
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { CRON, scheduledUrl, untilNextMinute } from '../scripts/dev-edge/cron.js'
import { envFileLine, UnwritableVariable, workerVars } from '../scripts/dev-edge/worker-vars.js'
import { VARIABLES } from '../src/config.js'

describe('the variables dev:edge hands the Worker', () => {
  it('are every variable of the configuration schema that the shell sets, and no other', () => {
    const shell: Record<string, string> = { PATH: '/usr/bin', HOME: '/root', AWS_SECRET_ACCESS_KEY: 'x', NEON_WS_PROXY: 'elsewhere:1' }
    for (const name of Object.keys(VARIABLES)) shell[name] = `value of ${name}`
    const vars = workerVars(shell, 'postgres://resolved/db', '127.0.0.1:5480')
    expect(Object.keys(vars).sort()).toEqual([...Object.keys(VARIABLES), 'NEON_WS_PROXY'].sort())
    expect(vars.QUEEN_ENCRYPTION_KEY).toBe('value of QUEEN_ENCRYPTION_KEY')
    expect(vars.QUEEN_TENANCY_HEADER).toBe('value of QUEEN_TENANCY_HEADER')
    expect(vars.JWT_SECRET).toBe('value of JWT_SECRET')
    // The database dev:edge resolved (the embedded server's URL when DATABASE_URL is unset), and
    // its own bridge, win over the shell.
    expect(vars.DATABASE_URL).toBe('postgres://resolved/db')
    expect(vars.NEON_WS_PROXY).toBe('127.0.0.1:5480')
  })

  it('leave out what is unset or empty, as the configuration reads it', () => {
    const vars = workerVars({ QUEEN_TENANCY_HEADER: '', JWT_ENABLED: 'true' }, 'postgres://db')
    expect(vars).toEqual({ JWT_ENABLED: 'true', DATABASE_URL: 'postgres://db' })
  })
})

describe("a line of wrangler's env file", () => {
  it('quotes literally, spans lines and keeps $ from expanding', () => {
    expect(envFileLine('A', 'postgres://u:p@h/db?x=1#y')).toBe("A='postgres://u:p@h/db?x=1#y'\n")
    expect(envFileLine('PEM', '-----BEGIN\nabc\n-----END')).toBe("PEM='-----BEGIN\nabc\n-----END'\n")
    expect(envFileLine('S', 'a$HOME')).toBe("S='a\\$HOME'\n")
    expect(envFileLine('S', "it's")).toBe("S=`it's`\n")
    // Double quotes only when the value holds both other quotes (and no backslash-n to be mangled).
    expect(envFileLine('S', "it's `x`")).toBe('S="it\'s `x`"\n')
  })

  it('refuses a value it cannot write exactly, naming the variable', () => {
    expect(() => envFileLine('JWT_SECRET', `'\`"`)).toThrow(UnwritableVariable)
    expect(() => envFileLine('JWT_SECRET', `'\`\\n`)).toThrow(/JWT_SECRET/)
  })
})

describe('the cron trigger under dev:edge', () => {
  it("fires wrangler.toml's one cron expression", () => {
    const toml = readFileSync(new URL('../wrangler.toml', import.meta.url), 'utf8')
    expect(/^crons\s*=\s*\[(.*)\]\s*$/m.exec(toml)?.[1]).toBe(JSON.stringify(CRON))
    expect(scheduledUrl('http://127.0.0.1:8787')).toBe('http://127.0.0.1:8787/__scheduled?cron=*%20*%20*%20*%20*')
  })

  it('at each whole minute', () => {
    const minute = Date.UTC(2031, 0, 1, 12, 0, 0)
    expect(untilNextMinute(minute)).toBe(60_000)
    expect(untilNextMinute(minute + 1)).toBe(59_999)
    expect(untilNextMinute(minute + 59_999)).toBe(1)
  })
})
