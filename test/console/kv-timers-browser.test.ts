// The console's KV and Timers pages in Chromium against a real broker: namespaces with their key
// counts, a namespace's keys in keyset pages with an expired row labelled; a queue's timers listed,
// counted under a prefix, peeked with their payload and cancelled after a confirmation, checked
// against the API; and a read-only token sees both pages without the Cancel button. Skipped with a
// printed notice without /usr/bin/chromium, like the other browser suites.
import type { Browser, Page } from 'playwright-core'
import { launchChromium, openPage, closePage, ok } from './chromium.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import { available, chromiumBrowser } from '../helpers/optional.js'
import { servedApp, type ServedApp } from '../helpers/served-app.js'
import { SECRET, token } from '../helpers/tokens.js'

const hasBrowser = available(chromiumBrowser, 'the KV and Timers pages browser test (test/console/kv-timers-browser.test.ts)')
const POLL = { timeout: 15_000 }
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64')

let database: TestDatabase
let broker: ServedApp
let browser: Browser

const open = (path: string, base = broker.base) => openPage(browser, base + path, 15_000)
const close = closePage

const timer = (timerKey: string, partition = 'Default') =>
  ({ op: 'schedule', queue: 'reminders', timerKey, partition, delayMs: 3_600_000, txn: 'txn-' + timerKey, payload: b64({ remind: timerKey }) })

describe.skipIf(!hasBrowser)('the KV and Timers pages in Chromium', { timeout: 90_000 }, () => {
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

  it('lists namespaces with their counts and a namespace in keyset pages, an expired key labelled', async () => {
    await ok(broker.json('POST', '/api/v1/kv', { operations: [
      { op: 'put', ns: 'sessions', key: 'alice', value: { cart: ['book', 'lamp'] }, forever: true },
      { op: 'put', ns: 'sessions', key: 'bob', value: 'short-lived', ttlSeconds: 1 },
      ...Array.from({ length: 55 }, (_, i) => ({ op: 'put', ns: 'bulk', key: 'k' + String(i).padStart(2, '0'), value: i, ttlSeconds: 3600 })),
    ] }))
    await ok(broker.json('POST', '/api/v1/kv', { operations: [{ op: 'put', ns: 'sessions', key: 'alice', value: { cart: ['book', 'lamp', 'pen'] }, forever: true }] }))
    // No lane runs in this broker, so bob stays stored after its expiry, unserved: the list labels it.
    await expect.poll(async () => (await ok(broker.json('GET', '/api/v1/kv/sessions/bob'))).found, POLL).toBe(false)

    const page = await open('/console/kv')
    await expect.poll(() => page.getByTestId('kv-ns-bulk').textContent(), POLL).toContain('55')
    expect(await page.getByTestId('kv-ns-sessions').textContent()).toContain('2')
    await page.getByTestId('kv-ns-sessions').getByRole('link', { name: 'sessions' }).click()
    await expect.poll(() => page.getByTestId('kv-row-alice').textContent(), POLL).toContain('["book","lamp","pen"]')
    expect(await page.getByTestId('kv-row-alice').textContent()).toMatch(/never.*live/)
    const { version } = await ok(broker.json('GET', '/api/v1/kv/sessions/alice'))
    expect(await page.getByTestId('kv-row-alice').locator('td').nth(2).textContent()).toBe(Number(version).toLocaleString('en-US'))
    expect(await page.getByTestId('kv-row-bob').textContent()).toContain('expired')
    expect(await page.locator('[data-action]').count()).toBe(0)

    await page.getByTestId('kv-ns-bulk').getByRole('link', { name: 'bulk' }).click()
    await expect.poll(() => page.getByTestId('kv-keys').locator('tbody tr').count(), POLL).toBe(50)
    await page.getByTestId('kv-next').click()
    await expect.poll(() => page.getByTestId('kv-keys').locator('tbody tr').count(), POLL).toBe(5)
    expect(await page.getByTestId('kv-row-k50').count()).toBe(1)
    expect(await page.getByTestId('kv-next').count()).toBe(0)
    expect(new URL(page.url()).searchParams.get('after')).toBe('k49')
    await close(page)
  })

  it('chooses a queue, counts, lists, peeks and cancels its timers', async () => {
    await ok(broker.json('POST', '/api/v1/configure', { queue: 'reminders' }))
    const scheduled = await ok(broker.json('POST', '/api/v1/timers', { operations: [timer('user/1/a', 'p1'), timer('user/1/b'), timer('user/2/a')] }))

    const page = await open('/console/timers')
    const questions: string[] = []
    page.on('dialog', (dialog) => {
      questions.push(dialog.message())
      void dialog.accept()
    })
    await page.getByTestId('timers-queue').fill('reminders')
    await page.getByRole('button', { name: 'Show' }).click()
    await expect.poll(() => page.getByTestId('timers').locator('tbody tr').count(), POLL).toBe(3)
    expect(await page.getByTestId('timer-user/1/a').textContent()).toContain('p1')
    expect(await page.getByTestId('timers').locator('thead').textContent()).toContain('Scheduled')

    await page.getByTestId('timers-prefix').fill('user/1/')
    await page.getByRole('button', { name: 'Count' }).click()
    await expect.poll(() => page.getByTestId('timers-count').textContent(), POLL).toContain('2 pending timers with keys starting "user/1/"')

    await page.getByTestId('timer-user/1/a').getByRole('link', { name: 'peek' }).click()
    await expect.poll(() => page.getByTestId('timer-payload').textContent(), POLL).toContain('"remind": "user/1/a"')
    expect(await page.getByTestId('timer-peek').textContent()).toContain('txn-user/1/a')
    // The message id the fire will push under, minted at schedule.
    expect(await page.getByTestId('timer-peek').textContent()).toContain(scheduled.results[0].messageId)

    await page.getByTestId('cancel-peeked-timer').click()
    await expect.poll(() => page.locator('p.flash').textContent(), POLL).toBe('Cancelled timer user/1/a of reminders.')
    expect(questions).toHaveLength(1)
    expect(questions[0]).toContain('Cancel timer "user/1/a" of queue "reminders"')
    expect((await ok(broker.json('GET', '/api/v1/timers/reminders/user%2F1%2Fa'))).found).toBe(false)
    await expect.poll(() => page.getByTestId('timers').locator('tbody tr').count(), POLL).toBe(2)
    await close(page)
  })

  it('shows a read-only token both pages without the Cancel button', async () => {
    const secured = await servedApp(database, { JWT_ENABLED: 'true', JWT_SECRET: SECRET })
    try {
      const page = await open('/console/timers?queue=reminders&peek=user%2F2%2Fa', secured.base)
      await page.getByTestId('token').fill(await token({ sub: 'viewer', role: 'read-only' }))
      await page.getByRole('button', { name: 'Use' }).click()
      await expect.poll(() => page.getByTestId('timer-payload').textContent(), POLL).toContain('"remind": "user/2/a"')
      expect(await page.getByTestId('timers').locator('tbody tr').count()).toBe(2)
      expect(await page.locator('[data-action]').count()).toBe(0)
      await page.goto(secured.base + '/console/kv?namespace=sessions')
      await expect.poll(() => page.getByTestId('kv-row-alice').count(), POLL).toBe(1)
      await close(page)
    } finally {
      await secured.close()
    }
  })
})
