// The console's Ephemeral page in Chromium: a queue with two consumer groups shows its depth and
// each group's pending count, and a later pop shows up on Refresh. Skipped with a printed notice
// without /usr/bin/chromium, like the other browser suites.
import type { Browser } from 'playwright-core'
import { launchChromium } from './chromium.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import { available, chromiumBrowser } from '../helpers/optional.js'
import { servedApp, type ServedApp } from '../helpers/served-app.js'

const hasBrowser = available(chromiumBrowser, 'the ephemeral page browser test (test/console/ephemeral-browser.test.ts)')

let database: TestDatabase
let broker: ServedApp
let browser: Browser

describe.skipIf(!hasBrowser)('the ephemeral page in Chromium', () => {
  beforeAll(async () => {
    database = await freshDatabase()
    broker = await servedApp(database)
    browser = await launchChromium()
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await broker?.close()
    await database?.drop()
  })

  it('lists a queue with its depth per group', async () => {
    const messages = [1, 2, 3].map((payload) => ({ payload }))
    expect((await broker.json('POST', '/api/v1/ephemeral/push', { queue: 'presence', messages })).status).toBe(201)
    expect((await broker.json('GET', '/api/v1/ephemeral/pop?queue=presence&group=fast&batch=3&autoAck=true')).status).toBe(200)
    expect((await broker.json('GET', '/api/v1/ephemeral/pop?queue=presence&group=slow&batch=1&autoAck=true')).status).toBe(200)
    const page = await browser.newPage()
    const errors: Error[] = []
    page.on('pageerror', (error) => errors.push(error))
    await page.goto(`${broker.base}/console/ephemeral`)
    const row = page.getByTestId('ephemeral-list').locator('tr', { hasText: 'presence' })
    await expect.poll(() => row.textContent(), { timeout: 10_000 }).toContain('fast: 0, slow: 2')
    expect((await broker.json('GET', '/api/v1/ephemeral/pop?queue=presence&group=slow&batch=2&autoAck=true')).status).toBe(200)
    await page.getByRole('button', { name: 'Refresh' }).click()
    await expect.poll(() => row.textContent(), { timeout: 10_000 }).toContain('slow: 0')
    await page.close()
    expect(errors).toEqual([])
  })
})
