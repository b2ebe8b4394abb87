// The console in a real browser (Debian's Chromium driven by playwright-core) against a broker with
// data: the list shows the queues, a queue opens, editing one option in the form changes that
// option and no other of the 21, a token entered in the connection form stays out of every URL,
// the Workload page, and the actions (replay, purge, clear) change the API's state only after a confirmation and are drawn
// only for a token whose roles the routes accept.
// Without /usr/bin/chromium the suite is skipped with a printed notice (.ci/run installs it).
import { mkdirSync } from 'node:fs'
import type { Browser, Page } from 'playwright-core'
import { launchChromium, openPage, closePage, ok } from './chromium.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import { servedApp, type ServedApp } from '../helpers/served-app.js'
import { SECRET, token } from '../helpers/tokens.js'
import { available, chromiumBrowser } from '../helpers/optional.js'

const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url)
const hasBrowser = available(chromiumBrowser, 'the console browser test (test/console/browser.test.ts)')
// Generous waits: the full suite shares two cores with PostgreSQL and workerd.
const POLL = { timeout: 10_000 }

let database: TestDatabase
let broker: ServedApp
let browser: Browser

/** Three queues as curl would make them: one configured, one with a consumer group and a dead letter. */
async function seed(b: ServedApp) {
  await ok(b.json('POST', '/api/v1/configure', { queue: 'orders', options: { leaseTime: 120, retryLimit: 5, dedupWindowSeconds: 600 } }))
  const items = (queue: string, n: number, partition?: string) =>
    Array.from({ length: n }, (_, i) => ({ queue, ...(partition ? { partition } : {}), payload: { n: i, queue } }))
  await ok(b.json('POST', '/api/v1/push', { items: [...items('orders', 4, 'eu'), ...items('orders', 3, 'us'), ...items('billing.invoice', 2), ...items('events', 2)] }), 201)
  await ok(b.json('POST', '/api/v1/configure', { queue: 'events', options: { retryLimit: 0 } }))
  const popped = await ok(b.json('GET', '/api/v1/pop/queue/events?consumerGroup=audit&subscriptionMode=all&batch=1'))
  const m = popped.messages[0]
  await ok(b.json('POST', '/api/v1/ack/batch', {
    consumerGroup: 'audit',
    acknowledgments: [{ transactionId: m.transactionId, partitionId: m.partitionId, leaseId: m.leaseId, status: 'failed', error: 'handler threw: bad invoice' }],
  }))
  // A last-value group: its depth row must show work depth (partitions) beside log depth.
  await ok(b.json('GET', '/api/v1/pop/queue/events?consumerGroup=latest&subscriptionMode=all&delivery=conflate&batch=1'))
  // The reconciler does not run in tests; one explicit pass makes the cached figures fresh.
  await ok(b.json('POST', '/api/v1/stats/refresh', {}))
}

const open = (path: string, base = broker.base) => openPage(browser, base + path, 10_000)
const close = closePage

describe.skipIf(!hasBrowser)('the console in Chromium', () => {
  beforeAll(async () => {
    database = await freshDatabase()
    broker = await servedApp(database)
    await seed(broker)
    browser = await launchChromium()
    mkdirSync(ARTIFACTS, { recursive: true })
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await broker?.close()
    await database?.drop()
  })

  it('lists the queues with fresh stats and draws the hour chart', async () => {
    // Right before the look, so a slow browser start cannot age the stats past the threshold.
    await ok(broker.json('POST', '/api/v1/stats/refresh', {}))
    const page = await open('/')
    const list = page.getByTestId('queue-list')
    for (const name of ['orders', 'billing.invoice', 'events']) await expect.poll(() => list.getByRole('link', { name, exact: true }).count(), POLL).toBe(1)
    const orders = list.locator('tr', { has: page.getByRole('link', { name: 'orders', exact: true }) })
    expect(await orders.locator('td').nth(2).textContent()).toBe('2')
    expect(await orders.locator('td').nth(3).textContent()).toBe('7')
    expect(await list.locator('tr', { hasText: 'billing.invoice' }).locator('td').nth(1).textContent()).toBe('billing / invoice')
    expect(await page.getByTestId('stats-age').textContent()).not.toContain('stale')
    expect(await page.getByTestId('charts').locator('svg path.line').count()).toBe(3)
    await page.screenshot({ path: new URL('console-list.png', ARTIFACTS).pathname, fullPage: true })
    await close(page)
  })

  it('marks stats older than the threshold stale, as when the reconciler has stopped', async () => {
    // An hour-old reconciliation: far past three missed passes of the Node stats lane (30 s).
    await database.sql(`update queen.stats set computed_at = now() - interval '1 hour' where tenant_id = ''`)
    try {
      const page = await open('/')
      await expect.poll(() => page.getByTestId('stats-age').textContent(), POLL).toBe('stale: stats 60 min old')
      await close(page)
    } finally {
      await ok(broker.json('POST', '/api/v1/stats/refresh', {}))
    }
  })

  it('opens a queue, edits one option, and leaves the other 20 as they were', async () => {
    const before = (await ok(broker.json('GET', '/api/v1/resources/queues/orders'))).options
    expect(Object.keys(before)).toHaveLength(21)
    const page = await open('/')
    await page.getByTestId('queue-list').getByRole('link', { name: 'orders', exact: true }).click()
    await page.waitForURL('**/console/queues/orders')
    expect(await page.getByTestId('queue-name').textContent()).toBe('orders')
    expect(await page.locator('[data-option=leaseTime]').textContent()).toBe('120')
    expect(await page.getByTestId('options').locator('tbody tr').count()).toBe(21)
    const depth = page.getByTestId('depth')
    expect(await depth.locator('tbody tr').first().textContent()).toContain('all consumers (worst cursor)')

    await page.getByRole('link', { name: 'Edit options' }).click()
    await page.waitForURL('**/console/queues/orders/edit')
    const form = page.getByTestId('edit-form')
    expect(await form.locator('#opt-dedupWindowSeconds').inputValue()).toBe('600')
    await page.screenshot({ path: new URL('console-edit.png', ARTIFACTS).pathname, fullPage: true })
    await form.locator('#opt-leaseTime').fill('300')
    await form.getByRole('button', { name: 'Save changed options' }).click()
    await page.waitForURL('**/console/queues/orders')
    expect(await page.getByRole('status').textContent()).toBe('Saved: leaseTime')

    await page.reload()
    expect(await page.locator('[data-option=leaseTime]').textContent()).toBe('300')
    const after = (await ok(broker.json('GET', '/api/v1/resources/queues/orders'))).options
    expect(after).toEqual({ ...before, leaseTime: 300 })
    await page.screenshot({ path: new URL('console.png', ARTIFACTS).pathname, fullPage: true })

    // A value configure refuses (the sink-hold cap is 60 s at least) is a 400 shown in the form,
    // and the queue keeps the configuration it had.
    await page.getByRole('link', { name: 'Edit options' }).click()
    await page.getByTestId('edit-form').locator('#opt-retentionSinkHoldMaxSeconds').fill('5')
    await page.getByRole('button', { name: 'Save changed options' }).click()
    await expect.poll(() => page.getByRole('status').textContent(), POLL).toMatch(/^Not saved: 400 /)
    expect((await ok(broker.json('GET', '/api/v1/resources/queues/orders'))).options).toEqual(after)
    await close(page)
  })

  it('shows the dead letter with its payload, and the consumer group with its lag', async () => {
    const page = await open('/console/dlq?queue=events')
    const dlq = page.getByTestId('dlq')
    await dlq.locator('summary', { hasText: 'view' }).click()
    expect(await dlq.locator('pre.payload').textContent()).toContain('"queue": "events"')
    expect(await dlq.textContent()).toContain('handler threw: bad invoice')
    await page.screenshot({ path: new URL('console-dlq.png', ARTIFACTS).pathname, fullPage: true })
    await page.getByRole('link', { name: 'events', exact: true }).first().click()
    const latest = page.getByTestId('depth').locator('tr', { hasText: 'latest' })
    expect(await latest.locator('td').nth(1).textContent()).toBe('conflate')
    await page.screenshot({ path: new URL('console-events.png', ARTIFACTS).pathname, fullPage: true })
    await page.getByRole('link', { name: 'Consumer groups' }).click()
    const groups = page.getByTestId('groups')
    await expect.poll(() => groups.getByRole('link', { name: 'audit', exact: true }).count(), POLL).toBe(1)
    await close(page)
  })

  it('shows the workload per namespace, drills down to queues, and charts the tenant\'s pushes', async () => {
    const page = await open('/console/workload')
    await expect.poll(() => page.getByTestId('workload-billing').count(), POLL).toBe(1)
    expect(await page.getByTestId('workload-billing').locator('td').nth(2).textContent()).toBe('2')
    expect(await page.locator('svg.chart').count()).toBe(1)
    await page.getByTestId('workload-billing').getByRole('link', { name: 'billing' }).click()
    await page.waitForURL('**/console/workload?groupBy=queue&namespace=billing')
    await expect.poll(() => page.getByTestId('workload-billing.invoice').count(), POLL).toBe(1)
    expect(await page.getByTestId('workload-orders').count()).toBe(0)
    await page.screenshot({ path: new URL('console-workload.png', ARTIFACTS).pathname, fullPage: true })
    await close(page)
  })

  it('lists stream queries with their source, sink, state size and source lag', async () => {
    const reg = await ok(broker.json('POST', '/streams/v1/queries', { name: 'order-counts', source_queue: 'orders', sink_queue: 'order-windows', config_hash: 'h' }))
    await ok(broker.json('POST', '/streams/v1/cycle', {
      query_id: reg.query_id,
      partition_id: '01890a5d-ac96-774b-bcce-b302099a8057',
      state_ops: [{ type: 'upsert', key: 'tumble\u001feu', value: { count: 4 } }],
      push_items: [],
      ack: null,
    }))
    const page = await open('/console')
    await page.getByRole('link', { name: 'Streams' }).click()
    const row = page.getByTestId('streams').locator('tr', { hasText: 'order-counts' })
    await expect.poll(() => row.count(), POLL).toBe(1)
    const cells = await row.locator('td').allTextContents()
    // Query, source, sink, state rows, size, partitions, lag (the 7 pushed to orders), updated.
    expect(cells.slice(0, 4)).toEqual(['order-counts', 'orders', 'order-windows', '1'])
    expect(cells[5]).toBe('1')
    expect(cells[6]).toBe('7')
    await page.screenshot({ path: new URL('console-streams.png', ARTIFACTS).pathname, fullPage: true })
    await close(page)
  })

  it('with JWT and tenancy on, asks once for a token and tenant, keeps them in the session and out of URLs', async () => {
    const secured = await servedApp(database, { JWT_ENABLED: 'true', JWT_SECRET: SECRET, QUEEN_TENANCY_HEADER: 'x-tenant' })
    try {
      const jwt = await token({ sub: 'operator', role: 'admin' })
      await ok(secured.json('POST', '/api/v1/push', { items: [{ queue: 'acme-jobs', payload: { x: 1 } }] }, { authorization: `Bearer ${jwt}`, 'x-tenant': 'acme' }), 201)
      const page = await open('/', secured.base)
      const urls: string[] = []
      page.on('request', (request) => urls.push(request.url()))
      expect(await page.getByRole('alert').textContent()).toMatch(/^401/)
      await page.getByTestId('token').fill(jwt)
      await page.getByTestId('tenant').fill('acme')
      await page.getByRole('button', { name: 'Use' }).click()
      await expect.poll(() => page.getByTestId('queue-list').getByRole('link', { name: 'acme-jobs' }).count(), POLL).toBe(1)
      // No reconciler pass has ever covered tenant acme (statsAge -1): the list says so.
      expect(await page.getByTestId('stats-age').textContent()).toBe('stale: stats never reconciled')
      await page.reload()
      await expect.poll(() => page.getByTestId('queue-list').getByRole('link', { name: 'acme-jobs' }).count(), POLL).toBe(1)
      expect(urls.length).toBeGreaterThan(3)
      for (const url of [...urls, page.url()]) expect(url).not.toContain(jwt.slice(-20))
      expect(await page.evaluate(() => [location.href, document.referrer, history.length].join(' '))).not.toContain(jwt.slice(-20))
      await close(page)
    } finally {
      await secured.close()
    }
  })

  it('as admin, replays a dead letter, purges a queue\'s dead letters and clears a partition, each after a confirmation naming what changes', async () => {
    const dlqBefore = (await ok(broker.json('GET', '/api/v1/dlq?queue=events'))).messages
    expect(dlqBefore.map((m: { consumerGroup: string }) => m.consumerGroup)).toEqual(['audit'])
    const page = await open('/console/dlq?queue=events')
    const questions: string[] = []
    page.on('dialog', (dialog) => {
      questions.push(dialog.message())
      void dialog.accept()
    })
    // Why: the error shapes of the queue's newest dead letters head the list.
    await expect.poll(() => page.getByTestId('dlq-signatures').textContent(), POLL).toContain('handler threw: bad invoice')
    await page.getByTestId(`replay-${dlqBefore[0].transactionId}`).click()
    await expect.poll(() => page.getByRole('status').textContent(), POLL).toBe(
      `Replayed ${dlqBefore[0].transactionId} for consumer group "audit" as dlq:${dlqBefore[0].id} at offset 2.`,
    )
    expect(questions[0]).toContain(`Replay message ${dlqBefore[0].transactionId} of events / Default dead-lettered by consumer group "audit"?`)
    expect((await ok(broker.json('GET', '/api/v1/dlq?queue=events'))).messages).toEqual([])
    const redelivered = await ok(broker.json('GET', '/api/v1/pop/queue/events?consumerGroup=audit&batch=10&wait=false'))
    expect(redelivered.messages.map((m: { transactionId: string }) => m.transactionId)).toContain(`dlq:${dlqBefore[0].id}`)

    // Purge: two fresh dead letters of events go at once.
    for (const m of (await ok(broker.json('GET', '/api/v1/status/queues/events/messages?limit=2'))) as { partitionId: string; transactionId: string }[]) {
      await ok(broker.json('POST', `/api/v1/messages/${m.partitionId}/${m.transactionId}/dlq`, {}))
    }
    await page.goto(broker.base + '/console/dlq?queue=events')
    await page.getByTestId('purge-dlq').click()
    await expect.poll(() => page.getByRole('status').textContent(), POLL).toBe('Purged 2 dead letters of events.')
    expect(questions[1]).toContain('Purge the 2 dead letters of queue "events"?')
    expect((await ok(broker.json('GET', '/api/v1/dlq?queue=events'))).total).toBe(0)

    const depth = async () => (await ok(broker.json('GET', '/api/v1/resources/partitions?queue=orders'))).partitions.map((p: { name: string; total: number }) => [p.name, p.total])
    expect(await depth()).toEqual([['eu', 4], ['us', 3]])
    await page.goto(broker.base + '/console/queues/orders')
    await page.getByTestId('clear-partition-us').click()
    await expect.poll(() => page.getByRole('status').textContent(), POLL).toBe('Cleared 3 messages from orders / us.')
    expect(questions[2]).toBe('Clear partition "us" of queue "orders"? This removes its 3 retained messages; other partitions are untouched.')
    expect(await depth()).toEqual([['eu', 4], ['us', 0]])
    await page.screenshot({ path: new URL('console-cleared.png', ARTIFACTS).pathname, fullPage: true })
    await close(page)
  })

  it('gives a read-write token the replay and move-to-DLQ buttons, and none of the admin ones', async () => {
    const secured = await servedApp(database, { JWT_ENABLED: 'true', JWT_SECRET: SECRET })
    try {
      // A dead letter to show, so the DLQ page has rows that carry a Replay button.
      const [m] = await ok(broker.json('GET', '/api/v1/status/queues/orders/messages?limit=1'))
      await ok(broker.json('POST', `/api/v1/messages/${m.partitionId}/${m.transactionId}/dlq`, {}))
      const jwt = await token({ sub: 'writer', role: 'read-write' })
      const page = await open('/console/queues/orders', secured.base)
      await page.getByTestId('token').fill(jwt)
      await page.getByRole('button', { name: 'Use' }).click()
      await expect.poll(() => page.getByTestId('queue-name').count(), POLL).toBe(1)
      // Replay and move-to-DLQ are read-write routes; clear, delete and purge are admin only.
      await expect.poll(() => page.getByTestId('messages').getByRole('button', { name: 'Move to DLQ' }).count(), POLL).toBeGreaterThan(0)
      expect(await page.getByTestId('clear-queue').count()).toBe(0)
      expect(await page.getByTestId('delete-queue').count()).toBe(0)
      expect(await page.getByTestId('partitions').getByRole('button').count()).toBe(0)
      await page.goto(secured.base + '/console/dlq?queue=orders')
      await expect.poll(() => page.getByTestId(`replay-${m.transactionId}`).count(), POLL).toBe(1)
      expect(await page.getByTestId('purge-dlq').count()).toBe(0)
      await close(page)
    } finally {
      await secured.close()
    }
  })
})
