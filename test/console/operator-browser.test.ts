// The console as an operator's daily tool (issue #25), in Chromium against a real broker: views
// refresh by themselves at the interval they show, pause while the tab is hidden and back off on a
// real 503; the message browser, the message page, the search by transaction id and the trace view;
// group cursors, the lagging highlight and the sampled lag chart; every action checked against the
// API before and after; a read-only token sees no action and its forged requests are refused; and
// the "done when" story end to end. Screenshots go to test-artifacts/operator-*.png.
import { mkdirSync } from 'node:fs'
import type { Browser, Page } from 'playwright-core'
import { launchChromium, openPage, closePage, ok } from './chromium.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import { servedApp, type ServedApp } from '../helpers/served-app.js'
import { SECRET, bearer, token } from '../helpers/tokens.js'
import { available, chromiumBrowser } from '../helpers/optional.js'

const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url)
const hasBrowser = available(chromiumBrowser, 'the operator console browser test (test/console/operator-browser.test.ts)')
// Generous waits: the full suite shares two cores with PostgreSQL and workerd.
const POLL = { timeout: 15_000 }
const TRACE_ID = '4f6c1d2e-8a3b-4c5d-9e0f-112233445566'

let database: TestDatabase
let broker: ServedApp
let browser: Browser

const shot = (page: Page, name: string) => page.screenshot({ path: new URL(`operator-${name}.png`, ARTIFACTS).pathname, fullPage: true })

/** Pops batch messages of one partition for group and settles them: completed, or failed with error from index failAt on. */
async function consume(b: ServedApp, queue: string, partition: string, group: string, batch: number, failAt = Infinity, error = 'handler threw') {
  const popped = await ok(b.json('GET', `/api/v1/pop/queue/${queue}/partition/${partition}?consumerGroup=${group}&subscriptionMode=all&batch=${batch}&wait=false`))
  const acknowledgments = popped.messages.map((m: any, i: number) => ({
    transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, ...(i >= failAt ? { status: 'failed', error } : { status: 'completed' }),
  }))
  if (acknowledgments.length) await ok(b.json('POST', '/api/v1/ack/batch', { consumerGroup: group, acknowledgments }))
  return popped.messages as any[]
}

async function push(b: ServedApp, queue: string, partition: string, n: number, from = 0) {
  const items = Array.from({ length: n }, (_, i) => ({ queue, partition, traceId: TRACE_ID, payload: { order: from + i, customer: { id: 'c-' + (from + i), tier: 'gold' } } }))
  return ok(b.json('POST', '/api/v1/push', { items }), 201)
}

const groupDetail = async (group: string) => ok(broker.json('GET', `/api/v1/consumer-groups/${group}`))
const lagOn = async (group: string, queue: string, partition: string) =>
  (await groupDetail(group))[queue]?.partitions.find((p: any) => p.partition === partition)?.offsetLag

const open = (path: string, base = broker.base) => openPage(browser, base + path, 15_000)
const close = closePage

/** Accepts every confirm (and answers prompts with answers, in order); returns the questions asked. */
function acceptDialogs(page: Page, answers: string[] = []) {
  const questions: string[] = []
  page.on('dialog', (dialog) => {
    questions.push(dialog.message())
    void (dialog.type() === 'prompt' ? dialog.accept(answers.shift()) : dialog.accept())
  })
  return questions
}

const flash = (page: Page) => page.locator('p.flash').textContent()

describe.skipIf(!hasBrowser)('the operator console in Chromium', { timeout: 90_000 }, () => {
  let failed: any
  beforeAll(async () => {
    database = await freshDatabase()
    broker = await servedApp(database)
    await ok(broker.json('POST', '/api/v1/configure', { queue: 'payments', options: { retryLimit: 0 } }))
    await push(broker, 'payments', 'p1', 6)
    await push(broker, 'payments', 'p2', 2, 100)
    // audit has read everything; billing settled offsets 0 and 1 of p1 and dead-lettered 2.
    await consume(broker, 'payments', 'p1', 'audit', 10)
    await consume(broker, 'payments', 'p2', 'audit', 10)
    const billing = await consume(broker, 'payments', 'p1', 'billing', 3, 2, 'card declined')
    failed = billing[2]
    await ok(broker.json('POST', '/api/v1/traces', { transactionId: failed.transactionId, partitionId: failed.partitionId, consumerGroup: 'billing', eventType: 'error', traceNames: ['order-2'], data: { step: 'charge', reason: 'card declined' } }), 201)
    await ok(broker.json('POST', '/api/v1/stats/refresh', {}))
    browser = await launchChromium()
    mkdirSync(ARTIFACTS, { recursive: true })
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await broker?.close()
    await database?.drop()
  })

  it('refreshes a view by itself at the interval it shows, moves the lag chart, and pauses while the tab is hidden', async () => {
    const page = await open('/console/groups/billing')
    const live = page.getByTestId('live')
    await expect.poll(() => live.textContent(), POLL).toMatch(/^Refreshing every 5 s/)
    await page.getByTestId('refresh-every').selectOption('2')
    await expect.poll(() => live.textContent(), POLL).toMatch(/^Refreshing every 2 s/)
    const lag = page.getByTestId('lag-payments-p1')
    expect(await lag.textContent()).toBe('3')
    // The chart plots the group's total over the queue's partitions.
    const total = async () => (await groupDetail('billing')).payments.partitions.reduce((sum: number, p: any) => sum + p.offsetLag, 0)
    const totalBefore = await total()
    // New work arrives through the API; the open page shows it without a reload.
    await push(broker, 'payments', 'p1', 2, 6)
    await expect.poll(() => lag.textContent(), POLL).toBe('5')
    // The chart gained points as the page refreshed: its last sample is the new lag.
    const values = async () => JSON.parse((await page.getByTestId('lag-chart').locator('path.line').getAttribute('data-values'))!)
    await expect.poll(async () => (await values()).length, POLL).toBeGreaterThan(2)
    expect((await values()).at(-1)).toBe(await total())
    expect((await values())[0]).toBe(totalBefore)
    expect(await total()).toBe(totalBefore + 2)
    await shot(page, 'group-live')

    const requests: string[] = []
    page.on('request', (r) => {
      if (r.url().includes('/api/')) requests.push(r.url())
    })
    await page.evaluate(() => {
      Object.defineProperty(document, 'hidden', { value: true, configurable: true })
      document.dispatchEvent(new Event('visibilitychange'))
    })
    expect(await live.textContent()).toMatch(/^Paused while the tab is hidden/)
    requests.length = 0
    await page.waitForTimeout(4500) // two intervals of 2 s: nothing may be fetched
    expect(requests).toEqual([])
    await page.evaluate(() => {
      Object.defineProperty(document, 'hidden', { value: false, configurable: true })
      document.dispatchEvent(new Event('visibilitychange'))
    })
    await expect.poll(() => requests.length, POLL).toBeGreaterThan(0)
    await expect.poll(() => live.textContent(), POLL).toMatch(/^Refreshing every 2 s/)
    await close(page)
  })

  it('backs off, doubling its wait, while the broker answers 503', async () => {
    // A broker whose database cannot be reached answers every API read 503 with Retry-After.
    const down = await servedApp({ appUrl: 'postgres://nobody@127.0.0.1:9/none' } as TestDatabase)
    try {
      const page = await open('/console/groups', down.base)
      const live = page.getByTestId('live')
      expect(await page.getByRole('alert').textContent()).toMatch(/^503/)
      await expect.poll(() => live.getAttribute('data-state'), POLL).toBe('backoff')
      expect(await live.textContent()).toContain('Broker unavailable (503), backing off; next try in 10 s')
      await page.getByTestId('refresh-every').selectOption('2')
      await expect.poll(() => live.textContent(), POLL).toContain('next try in 4 s')
      await expect.poll(() => live.textContent(), POLL).toContain('next try in 8 s')
      await shot(page, 'backoff')
      await close(page)
    } finally {
      await down.close()
    }
  })

  it('names the refresh interval once in the header, also after the operator changes it', async () => {
    const page = await open('/console/queues')
    const live = page.getByTestId('live')
    await expect.poll(() => live.getAttribute('data-state'), POLL).toBe('live')
    // What the header slot shows: its text, and of the selector only the option on display.
    const shown = () => page.locator('#live').evaluate((slot) => {
      const text = (node: Node): string => node instanceof HTMLSelectElement ? node.selectedOptions[0]?.text ?? ''
        : node.nodeType === Node.TEXT_NODE ? node.textContent ?? '' : Array.from(node.childNodes).map(text).join(' ')
      return text(slot).replace(/\s+/g, ' ').trim()
    })
    const times = (text: string, phrase: RegExp) => (text.match(phrase) ?? []).length
    await expect.poll(shown, POLL).toMatch(/^Refreshing every 5 s/)
    expect(times(await shown(), /\b5 s\b/g)).toBe(1)
    expect(times(await shown(), /\bevery\b/g)).toBe(1)
    await page.getByTestId('refresh-every').selectOption('15')
    await expect.poll(shown, POLL).toMatch(/^Refreshing every 15 s/)
    expect(times(await shown(), /\b15 s\b/g)).toBe(1)
    // The list still says which interval is in force.
    expect(await page.getByTestId('refresh-every').locator('option', { hasText: 'current' }).textContent()).toBe('15 s (current)')
    await close(page)
  })

  it('draws the header and the view\'s heading at once, and says which broker calls it waits for', async () => {
    const page = await openPage(browser)
    // Hold the settings and the queue's own answer until the test lets them through.
    const held = (pattern: string) => {
      let release = () => {}
      const gate = new Promise<void>((resolve) => { release = resolve })
      void page.route(pattern, async (route) => {
        await gate
        await route.continue()
      })
      return release
    }
    const releaseSettings = held('**/console/config.json')
    const releaseQueue = held('**/api/v1/resources/queues/payments')
    await page.goto(broker.base + '/console/queues/payments', { waitUntil: 'commit' })
    const waiting = page.getByTestId('waiting')
    await expect.poll(() => page.locator('main h1').textContent(), POLL).toBe('Queue payments')
    await expect.poll(() => waiting.textContent(), POLL).toContain('GET /console/config.json')
    expect(await waiting.textContent()).toContain('GET /api/v1/resources/queues/payments')
    expect(await page.locator('nav a.active').textContent()).toBe('Queues')
    expect(await page.getByTestId('live').textContent()).toMatch(/^Refreshing every 5 s/)
    // No connection form before the settings say there is one (this broker has none).
    expect(await page.locator('#connection').isVisible()).toBe(false)
    await shot(page, 'loading')
    releaseSettings()
    await expect.poll(() => waiting.textContent(), POLL).not.toContain('config.json')
    expect(await waiting.textContent()).toContain('GET /api/v1/resources/queues/payments')
    releaseQueue()
    await expect.poll(() => page.getByTestId('queue-name').textContent(), POLL).toBe('payments')
    expect(await waiting.count()).toBe(0)
    await close(page)
  })

  it('browses a partition newest first with each group\'s cursor, opens a message by keyboard, finds one by transaction id, and follows a trace', async () => {
    const page = await open('/console/queues/payments')
    await page.getByTestId('partitions').getByRole('link', { name: 'p1', exact: true }).click()
    await page.waitForURL('**/console/queues/payments/partitions/p1')
    const rows = page.getByTestId('partition-messages').locator('tbody tr')
    await expect.poll(() => rows.count(), POLL).toBe(8)
    expect(await rows.evaluateAll((trs) => trs.map((tr) => Number(tr.getAttribute('data-offset'))))).toEqual([7, 6, 5, 4, 3, 2, 1, 0])
    expect(await page.getByTestId('offset-range').textContent()).toBe('offsets 7 down to 0')
    const cursors = page.getByTestId('partition-cursors')
    expect(await cursors.locator('tr', { hasText: 'billing' }).locator('td').nth(2).textContent()).toBe('3')
    expect(await cursors.locator('tr', { hasText: 'audit' }).locator('td').nth(2).textContent()).toBe('6')
    // Consumed by: the groups whose cursor is past the offset.
    const consumedBy = async (offset: number) => (await page.locator(`tr[data-offset="${offset}"] td`).nth(5).textContent())
    expect(await consumedBy(0)).toBe('audit, billing')
    expect(await consumedBy(4)).toBe('audit')
    expect(await consumedBy(7)).toBe('no group yet')
    await shot(page, 'partition')

    // Keyboard: the row is focusable and Enter opens the message.
    await page.locator('tr[data-offset="2"]').focus()
    await page.keyboard.press('Enter')
    await page.waitForURL(`**/console/messages/${failed.partitionId}/${failed.transactionId}`)
    expect(await page.getByTestId('message-txn').textContent()).toBe(failed.transactionId)
    expect(await page.getByTestId('message-trace-id').textContent()).toBe(TRACE_ID)
    expect(await page.getByTestId('payload').textContent()).toBe(JSON.stringify({ order: 2, customer: { id: 'c-2', tier: 'gold' } }, null, 2))
    const groups = page.getByTestId('message-groups')
    const billingRow = groups.locator('tr', { hasText: 'billing' })
    expect(await billingRow.textContent()).toContain('card declined')
    expect(await billingRow.locator('td').nth(2).textContent()).toBe('yes')
    expect(await page.getByTestId('message-traces').textContent()).toContain('"reason": "card declined"')
    // Human times with the exact instant on hover.
    expect(await page.getByTestId('message-facts').locator('time').getAttribute('title')).toContain(failed.createdAt.slice(0, 19))
    await shot(page, 'message')

    // Search by transaction id from the partition page.
    await page.goBack()
    await page.getByTestId('find-txn').fill(failed.transactionId)
    await page.getByRole('button', { name: 'Find message' }).click()
    await page.waitForURL('**/console/queues/payments/find?transactionId=*')
    const found = page.getByTestId('found').locator('tbody tr')
    await expect.poll(() => found.count(), POLL).toBe(1)
    expect(await found.textContent()).toContain('p1')
    await found.getByRole('link', { name: failed.transactionId }).click()
    await page.waitForURL(`**/console/messages/${failed.partitionId}/${failed.transactionId}`)

    // Trace view: by name, each event linked back to its message.
    await page.getByTestId('message-traces').getByRole('link', { name: 'order-2' }).click()
    await page.waitForURL('**/console/traces/order-2')
    const events = page.getByTestId('trace-events')
    await expect.poll(() => events.getByRole('link', { name: failed.transactionId }).count(), POLL).toBe(1)
    expect(await events.textContent()).toContain('error')
    await page.getByRole('link', { name: 'Traces', exact: true }).first().click()
    await expect.poll(() => page.getByTestId('trace-names').textContent(), POLL).toContain('order-2')
    await shot(page, 'traces')
    // The URL of a view is all it takes to come back to it: no token, no state elsewhere. This
    // second window prefers a dark scheme, and the console follows it.
    const again = await open(new URL(page.url()).pathname)
    expect(await again.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe('rgb(247, 248, 250)')
    await again.emulateMedia({ colorScheme: 'dark' })
    await expect.poll(() => again.getByTestId('trace-names').textContent(), POLL).toContain('order-2')
    expect(await again.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe('rgb(18, 21, 27)')
    await shot(again, 'dark')
    await close(again)
    await close(page)
  })

  it('highlights lagging groups and shows a group\'s cursors and subscription mode', async () => {
    const lagging = await ok(broker.json('GET', '/api/v1/consumer-groups/lagging?minLagSeconds=0'))
    expect(lagging.some((l: any) => l.consumer_group === 'billing')).toBe(true)
    // audit reads what the first test pushed since, and is caught up again.
    await consume(broker, 'payments', 'p1', 'audit', 10)
    const page = await open('/console/groups')
    await page.getByRole('link', { name: 'any age' }).click()
    await page.waitForURL('**/console/groups?minLag=0')
    await expect.poll(() => page.getByTestId('lagging-billing').count(), POLL).toBe(1)
    expect(await page.getByTestId('groups').locator('tr.lagging', { hasText: 'billing' }).count()).toBe(1)
    // audit has read every message: never highlighted.
    expect(await page.getByTestId('lagging-audit').count()).toBe(0)
    await shot(page, 'groups')
    await page.getByTestId('groups').getByRole('link', { name: 'billing', exact: true }).click()
    await page.waitForURL('**/console/groups/billing')
    expect(await page.getByTestId('subscription-payments').textContent()).toBe((await ok(broker.json('GET', '/api/v1/consumer-groups'))).find((g: any) => g.name === 'billing').subscriptionMode)
    const p1 = page.getByTestId('cursors-payments').locator('tr', { hasText: 'p1' })
    expect(await p1.locator('td').nth(1).textContent()).toBe(String((await groupDetail('billing')).payments.partitions.find((p: any) => p.partition === 'p1').committedOffset))
    await close(page)
  })

  it('as admin, seeks a group to the start, to a time and to the end, each after a confirmation, and the API agrees', async () => {
    await ok(broker.json('POST', '/api/v1/configure', { queue: 'ledger', options: {} }))
    await push(broker, 'ledger', 'a', 4)
    await consume(broker, 'ledger', 'a', 'books', 4)
    expect(await lagOn('books', 'ledger', 'a')).toBe(0)
    const page = await open('/console/groups/books')
    const mark = new Date(Date.now() + 60_000).toISOString()
    const questions = acceptDialogs(page, [mark])
    await page.getByTestId('seek-start-ledger').click()
    await expect.poll(() => flash(page), POLL).toBe('Moved consumer group "books" on ledger to the start (1 partitions).')
    expect(questions[0]).toContain('Move consumer group "books" on queue "ledger" to the start of every partition?')
    expect(await lagOn('books', 'ledger', 'a')).toBe(4)
    await expect.poll(() => page.getByTestId('lag-ledger-a').textContent(), POLL).toBe('4')

    // A time after every message: the cursor goes past them all.
    await page.getByTestId('seek-time-ledger').click()
    await expect.poll(() => flash(page), POLL).toContain(`on ledger to ${mark}`)
    expect(questions[1]).toMatch(/^Seek consumer group "books" on queue "ledger" to which instant/)
    expect(questions[2]).toContain(`to ${mark} on every partition?`)
    expect(await lagOn('books', 'ledger', 'a')).toBe(0)

    await ok(broker.json('POST', '/api/v1/consumer-groups/books/queues/ledger/seek', { timestamp: '1970-01-01T00:00:00Z' }))
    expect(await lagOn('books', 'ledger', 'a')).toBe(4)
    await page.getByTestId('seek-end-ledger').click()
    await expect.poll(() => flash(page), POLL).toBe('Moved consumer group "books" on ledger to the end (1 partitions).')
    expect(questions[3]).toContain('skipped for this group')
    expect(await lagOn('books', 'ledger', 'a')).toBe(0)
    await close(page)
  })

  it('as admin, deletes a group and a queue, switches maintenance on and off, and refreshes stats, each after a confirmation', async () => {
    await push(broker, 'scratch', 'a', 2)
    await consume(broker, 'scratch', 'a', 'temp', 1)
    expect(Object.keys(await groupDetail('temp'))).toEqual(['scratch'])
    const page = await open('/console/groups/temp')
    const questions = acceptDialogs(page)
    await page.getByTestId('delete-group').click()
    await page.waitForURL('**/console/groups')
    await expect.poll(() => flash(page), POLL).toMatch(/^Deleted consumer group "temp"/)
    expect(questions[0]).toContain('Delete consumer group "temp" on queues scratch?')
    expect(await groupDetail('temp')).toEqual({})

    await page.goto(broker.base + '/console/queues/scratch')
    await page.getByTestId('delete-queue').click()
    await page.waitForURL('**/console/queues')
    await expect.poll(() => flash(page), POLL).toBe('Deleted queue scratch.')
    expect(questions[1]).toContain('Delete queue "scratch"? Its 2 retained messages')
    expect((await broker.json('GET', '/api/v1/resources/queues/scratch')).status).toBe(404)

    await page.getByRole('link', { name: 'System' }).click()
    await expect.poll(() => page.getByTestId('maintenance-push-state').textContent(), POLL).toBe('off')
    await page.getByTestId('maintenance-push').click()
    await expect.poll(() => page.getByTestId('maintenance-push-state').textContent(), POLL).toBe('on')
    expect(questions[2]).toContain('Turn push maintenance on? Every push on this broker (all tenants) will answer 503')
    expect((await ok(broker.json('GET', '/api/v1/system/maintenance'))).maintenanceMode).toBe(true)
    expect((await broker.json('POST', '/api/v1/push', { items: [{ queue: 'payments', payload: {} }] })).status).toBe(503)
    await shot(page, 'system')
    await page.getByTestId('maintenance-push').click()
    await expect.poll(() => page.getByTestId('maintenance-push-state').textContent(), POLL).toBe('off')
    expect((await ok(broker.json('GET', '/api/v1/system/maintenance'))).maintenanceMode).toBe(false)
    await page.getByTestId('maintenance-pop').click()
    await expect.poll(() => page.getByTestId('maintenance-pop-state').textContent(), POLL).toBe('on')
    expect((await ok(broker.json('GET', '/api/v1/system/maintenance/pop'))).popMaintenanceMode).toBe(true)
    await page.getByTestId('maintenance-pop').click()
    await expect.poll(() => page.getByTestId('maintenance-pop-state').textContent(), POLL).toBe('off')
    expect((await ok(broker.json('GET', '/api/v1/system/maintenance/pop'))).popMaintenanceMode).toBe(false)

    // Stats an hour old: the refresh button makes them fresh, as the API then says.
    await database.sql(`update queen.stats set computed_at = now() - interval '1 hour' where tenant_id = ''`)
    expect((await ok(broker.json('GET', '/api/v1/resources/queues'))).statsAge).toBeGreaterThan(3000)
    await page.reload()
    await expect.poll(() => page.getByTestId('stats-age').textContent(), POLL).toMatch(/^stale/)
    await page.getByTestId('refresh-stats').click()
    await expect.poll(() => flash(page), POLL).toMatch(/^Stats refreshed for \d+ queues/)
    expect(questions.at(-1)).toContain('Recompute the cached queue figures')
    expect((await ok(broker.json('GET', '/api/v1/resources/queues'))).statsAge).toBeLessThan(60)
    await close(page)
  })

  it('shows a read-only token no action anywhere, and the API refuses the actions it would forge', async () => {
    const secured = await servedApp(database, { JWT_ENABLED: 'true', JWT_SECRET: SECRET })
    try {
      const jwt = await token({ sub: 'viewer', role: 'read-only' })
      const page = await open('/console/queues/payments', secured.base)
      await page.getByTestId('token').fill(jwt)
      await page.getByRole('button', { name: 'Use' }).click()
      await expect.poll(() => page.getByTestId('queue-name').count(), POLL).toBe(1)
      const paths = ['/console/queues/payments', '/console/queues/payments/partitions/p1', `/console/messages/${failed.partitionId}/${failed.transactionId}`,
        '/console/groups/billing', '/console/dlq', '/console/system']
      for (const path of paths) {
        await page.goto(secured.base + path)
        await expect.poll(() => page.locator('main h1').count(), POLL).toBe(1)
        await page.waitForLoadState('networkidle')
        expect(await page.locator('[data-action]').count(), path).toBe(0)
      }
      expect(await page.getByTestId('not-admin').count()).toBe(1)
      await shot(page, 'read-only')
      // The same requests the buttons send, forged with this token, from the page itself.
      const lagBefore = await lagOn('billing', 'payments', 'p1')
      const forged = await page.evaluate(async ({ jwt, failed }) => {
        const send = async (method: string, path: string, body?: unknown) =>
          (await fetch(path, { method, headers: { authorization: 'Bearer ' + jwt, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })).status
        return [
          await send('POST', '/api/v1/consumer-groups/billing/queues/payments/seek', { toEnd: true }),
          await send('POST', `/api/v1/messages/${failed.partitionId}/${failed.transactionId}/retry?consumerGroup=billing`, {}),
          await send('DELETE', '/api/v1/consumer-groups/billing'),
          await send('DELETE', '/api/v1/queues/payments/clear?partition=p1'),
          await send('DELETE', '/api/v1/resources/queues/payments'),
          await send('POST', '/api/v1/system/maintenance', { enabled: true }),
          await send('POST', '/api/v1/stats/refresh', {}),
        ]
      }, { jwt, failed })
      expect(forged).toEqual([403, 403, 403, 403, 403, 403, 403])
      expect(await lagOn('billing', 'payments', 'p1')).toBe(lagBefore)
      expect((await ok(broker.json('GET', '/api/v1/dlq?queue=payments'))).total).toBe(1)
      expect((await ok(secured.json('GET', '/api/v1/resources/queues/payments', undefined, bearer(jwt)))).totals.total).toBeGreaterThan(0)
      expect((await ok(broker.json('GET', '/api/v1/system/maintenance'))).maintenanceMode).toBe(false)
      await close(page)
    } finally {
      await secured.close()
    }
  })

  it('done when: the operator finds a stuck message, sees which group is behind and why, retries it, seeks the group and sees the lag fall', async () => {
    // The stuck message: dispatch dead-lettered offset 1 of shipments and is behind by three.
    await ok(broker.json('POST', '/api/v1/configure', { queue: 'shipments', options: { retryLimit: 0 } }))
    await push(broker, 'shipments', 'eu', 5)
    const [, stuck] = await consume(broker, 'shipments', 'eu', 'dispatch', 2, 1, 'carrier API timeout')
    expect(await lagOn('dispatch', 'shipments', 'eu')).toBe(3)

    const page = await open('/')
    const questions = acceptDialogs(page)
    // Which group is behind: the groups page highlights it.
    await page.getByRole('link', { name: 'Consumer groups' }).click()
    await page.getByRole('link', { name: 'any age' }).click()
    await expect.poll(() => page.getByTestId('lagging-dispatch').count(), POLL).toBe(1)
    const dispatchRow = page.getByTestId('groups').locator('tr', { hasText: 'dispatch' })
    expect(await dispatchRow.locator('td').nth(5).textContent()).toBe('3')
    // Why: the dead letter, its error, and the message itself.
    await page.getByRole('link', { name: 'Dead letters' }).click()
    const letter = page.getByTestId('dlq').locator('tr', { hasText: 'carrier API timeout' })
    await expect.poll(() => letter.count(), POLL).toBe(1)
    await letter.getByRole('link', { name: 'open' }).click()
    await page.waitForURL(`**/console/messages/${stuck.partitionId}/${stuck.transactionId}`)
    const row = page.getByTestId('message-groups').locator('tr', { hasText: 'dispatch' })
    await expect.poll(() => row.textContent(), POLL).toContain('carrier API timeout')
    await shot(page, 'done-when-message')
    // Replay it for dispatch: the dead letter goes and the message comes back at the end of the partition.
    const [deadLetter] = (await ok(broker.json('GET', '/api/v1/dlq?queue=shipments'))).messages
    await row.getByTestId(`replay-${stuck.transactionId}`).click()
    await expect.poll(() => flash(page), POLL).toBe(`Replayed ${stuck.transactionId} for consumer group "dispatch" as dlq:${deadLetter.id} at offset 5.`)
    expect(questions[0]).toContain(`Replay message ${stuck.transactionId} of shipments / eu dead-lettered by consumer group "dispatch"?`)
    expect((await ok(broker.json('GET', '/api/v1/dlq?queue=shipments'))).total).toBe(0)
    expect(await lagOn('dispatch', 'shipments', 'eu')).toBe(4)
    // Then skip the backlog: seek dispatch to the end and watch the lag fall on its page.
    await row.getByRole('link', { name: 'dispatch' }).click()
    await page.waitForURL('**/console/groups/dispatch')
    const lag = page.getByTestId('lag-shipments-eu')
    await expect.poll(() => lag.textContent(), POLL).toBe('4')
    await page.getByTestId('seek-end-shipments').click()
    await expect.poll(() => lag.textContent(), POLL).toBe('0')
    expect(questions[1]).toContain('The 4 messages it has not consumed are skipped for this group')
    expect(await lagOn('dispatch', 'shipments', 'eu')).toBe(0)
    const values = JSON.parse((await page.getByTestId('lag-chart').locator('path.line').getAttribute('data-values'))!)
    expect(values.at(-1)).toBe(0)
    expect(Math.max(...values)).toBe(4)
    await shot(page, 'done-when-group')
    await close(page)
  })
})
