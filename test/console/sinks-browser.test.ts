// The console's sinks page in Chromium: a queue whose retentionSinkHold names a sink that has not
// run shows as "never ran", and after a sink commits, its row shows the archived count, the last
// object and that the hold is holding retention back. Skipped with a printed notice without
// /usr/bin/chromium, like the other browser suite.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { launchChromium } from './chromium.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSinkEngine } from '../../src/sink/engine.js'
import { sinkOptions } from '../../src/sink/options.js'
import { databaseSource } from '../../src/sink/source.js'
import { directoryStore } from '../../src/sink/store-directory.js'
import { testApp, type TestApp } from '../helpers/app.js'
import type { TestDatabase } from '../helpers/database.js'
import { servedApp, type ServedApp } from '../helpers/served-app.js'
import { sinkDatabase, sleep } from '../helpers/sink.js'
import { available, chromiumBrowser } from '../helpers/optional.js'

const hasBrowser = available(chromiumBrowser, 'the sinks page browser test (test/console/sinks-browser.test.ts)')

let database: TestDatabase
let broker: ServedApp
let app: TestApp
let browser: Browser
let dir: string

describe.skipIf(!hasBrowser)('the sinks page in Chromium', () => {
  beforeAll(async () => {
    database = await sinkDatabase()
    broker = await servedApp(database)
    app = await testApp({ database })
    dir = mkdtempSync(join(tmpdir(), 'queen-sinks-page-'))
    browser = await launchChromium()
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await broker?.close()
    await app?.close()
    await database?.drop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('shows a hold that never ran, then the running sink with its pointer, last object and hold state', async () => {
    expect((await broker.json('POST', '/api/v1/configure', { queue: 'ledger', options: { retentionEnabled: true, retentionSeconds: 1, retentionSinkHold: 'vault' } })).status).toBe(200)
    const page = await browser.newPage()
    const errors: Error[] = []
    page.on('pageerror', (error) => errors.push(error))
    await page.goto(`${broker.base}/console/sinks`)
    const row = page.getByTestId('sink-list').locator('tr', { hasText: 'vault' })
    await expect.poll(() => row.textContent(), { timeout: 10_000 }).toContain('never ran')

    expect((await broker.json('POST', '/api/v1/push', { items: [{ queue: 'ledger', partition: 'a', payload: { n: 1 } }] })).status).toBe(201)
    const engine = createSinkEngine(databaseSource(app.db, app.config, ''), directoryStore(dir), sinkOptions.parse({ sink: 'vault', queues: ['ledger'], windowSeconds: 1, layout: 'legacy' }))
    for (let i = 0; i < 40; i++) {
      const runs = await engine.runOnce(3000)
      if (runs[0]!.frames > 0 || (await app.json('GET', '/api/v1/sinks')).body.sinks[0].framesArchived > 0) break
      await sleep(200)
    }
    await page.getByRole('button', { name: 'Refresh' }).click()
    await expect.poll(() => row.textContent(), { timeout: 10_000 }).toContain('running')
    const text = (await row.textContent())!
    expect(text).toContain('holding retention')
    expect(text).toContain('vault/ledger/data/a/')
    // What the last commit wrote, and its last window with frames.
    expect(text).toContain('jsonl (gzip), legacy')
    expect(text).toContain('(1 frames)')
    await engine.release()
    await page.close()
    expect(errors).toEqual([])
  })
})
