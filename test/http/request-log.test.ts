import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLogger } from '../../src/log.js'
import { testApp, type TestApp } from '../helpers/app.js'

const lines: Record<string, unknown>[] = []
let app: TestApp
beforeAll(async () => {
  app = await testApp({ deps: { log: createLogger('info', (line) => lines.push(JSON.parse(line))) } })
})
afterAll(() => app.close())

describe('request logging', () => {
  it('logs one JSON line per request: id, method, route pattern, status, ms; never the query or headers', async () => {
    lines.length = 0
    await app.request('/health?token=s3cr3t', { headers: { 'x-request-id': 'req-1', authorization: 'Bearer s3cr3t' } })
    await app.request('/no/such/route')
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatchObject({ level: 'info', msg: 'request', requestId: 'req-1', method: 'GET', route: '/health', status: 200 })
    expect(typeof lines[0]!.ms).toBe('number')
    expect(lines[1]).toMatchObject({ route: 'unmatched', status: 404 })
    expect(JSON.stringify(lines)).not.toContain('s3cr3t')
  })
})
