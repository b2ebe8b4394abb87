// The console's Placements page (issue #26) in Chromium against a real broker over two real
// databases (default and d1), authentication and tenancy on: an admin places a tenant on d1
// through the form and moves it back with the row's button, each after a confirmation naming the
// tenant and the databases, and the directory read through the API changes accordingly; a refused
// placement shows the error envelope's message and writes nothing; a read-only token and an admin
// token bound to a tenant see no placement action, and their forged writes answer 403.
// Screenshots go to test-artifacts/placements-*.png.
import { serve } from '@hono/node-server'
import { mkdirSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import type { Browser, Page } from 'playwright-core'
import { closePage, launchChromium, openPage } from './chromium.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { placedApp, TENANT_HEADER, type PlacedApp } from '../helpers/placed-app.js'
import { SECRET, token } from '../helpers/tokens.js'
import { available, chromiumBrowser } from '../helpers/optional.js'

const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url)
const hasBrowser = available(chromiumBrowser, 'the Placements page browser test (test/console/placements-browser.test.ts)')
const POLL = { timeout: 15_000 }

let placed: PlacedApp
let server: ReturnType<typeof serve>
let base: string
let browser: Browser
let adminJwt: string

/** An API call as curl would make it, with a token and the tenant header. */
async function call(jwt: string, method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${jwt}`, [TENANT_HEADER]: 'ops', 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: res.status, body: await res.json() }
}

async function directory() {
  const listed = await call(adminJwt, 'GET', '/api/v1/system/placements')
  expect(listed.status).toBe(200)
  return listed.body as { databases: string[]; version: number; placements: { tenant: string; database: string; state: string }[] }
}

/** Opens the Placements page with this token and tenant ops, through the console's connection form. */
async function openAs(jwt: string): Promise<Page> {
  const page = await openPage(browser, base + '/console/placements')
  await page.getByTestId('token').fill(jwt)
  await page.getByTestId('tenant').fill('ops')
  await page.getByRole('button', { name: 'Use' }).click()
  await expect.poll(() => page.locator('main h1').textContent(), POLL).toBe('Placements')
  return page
}

const close = closePage

function acceptDialogs(page: Page) {
  const questions: string[] = []
  page.on('dialog', (dialog) => {
    questions.push(dialog.message())
    void dialog.accept()
  })
  return questions
}

const flash = (page: Page) => page.locator('main .flash').textContent()
const shot = (page: Page, name: string) => page.screenshot({ path: new URL(`placements-${name}.png`, ARTIFACTS).pathname, fullPage: true })

describe.skipIf(!hasBrowser)('the Placements page in Chromium', () => {
  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true })
    placed = await placedApp({ count: 2, env: { JWT_ENABLED: 'true', JWT_SECRET: SECRET } })
    server = await new Promise<ReturnType<typeof serve>>((ready) => {
      const s = serve({ fetch: placed.app.fetch, port: 0, hostname: '127.0.0.1' }, () => ready(s))
    })
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    adminJwt = await token({ sub: 'operator', role: 'admin' })
    browser = await launchChromium()
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    if (server) {
      const closing = new Promise<void>((done) => server.close(() => done()))
      if ('closeAllConnections' in server) server.closeAllConnections()
      await closing
    }
    await placed?.close()
  })

  it('as admin, places a tenant on the second database through the form and moves it back, each after a confirmation', async () => {
    expect((await directory()).placements).toEqual([])
    const page = await openAs(adminJwt)
    const questions = acceptDialogs(page)
    await expect.poll(() => page.getByTestId('database-list').textContent(), POLL).toContain('d1')
    expect(await page.getByTestId('placement-list').textContent()).toContain('No tenant is placed')
    expect(await page.getByTestId('place-database').locator('option').allTextContents()).toEqual(['default', 'd1'])

    // A refused placement: the envelope's message is the status line, and nothing is written.
    const before = (await directory()).version
    await page.getByTestId('place-tenant').fill('bad tenant')
    await page.getByTestId('place').click()
    await expect.poll(() => flash(page), POLL).toMatch(/^Not done: 400 tenant must be 1-128 characters/)
    expect((await directory()).version).toBe(before)

    await page.getByTestId('place-tenant').fill('acme')
    await page.getByTestId('place-database').selectOption('d1')
    await page.getByTestId('place').click()
    await expect.poll(() => flash(page), POLL).toMatch(/^Placed tenant acme on d1 \(directory version \d+\)\.$/)
    expect(questions[1]).toContain('Place tenant "acme" on database "d1"? Its requests will be routed there')
    expect(questions[1]).toContain('No data is moved')
    const afterPlace = await directory()
    expect(afterPlace.placements.map((p) => [p.tenant, p.database, p.state])).toEqual([['acme', 'd1', 'placed']])
    expect(afterPlace.version).toBeGreaterThan(before)
    const row = page.locator('[data-tenant="acme"]')
    await expect.poll(() => row.textContent(), POLL).toContain('d1')
    await shot(page, 'admin')

    // The tenant's data now lands on d1; the row's Move takes it and the data back to default.
    const pushed = await fetch(base + '/api/v1/push', {
      method: 'POST',
      headers: { authorization: `Bearer ${adminJwt}`, [TENANT_HEADER]: 'acme', 'content-type': 'application/json' },
      body: JSON.stringify({ items: [{ queue: 'orders', payload: { n: 1 } }] }),
    })
    expect(pushed.status).toBe(201)
    expect(await placed.databases.d1!.sql(`select name from queen.queues where tenant_id = 'acme'`)).toHaveLength(1)
    await page.getByTestId('move-to-acme').selectOption('default')
    await page.getByTestId('move-acme').click()
    await expect.poll(() => flash(page), POLL).toMatch(/^Moved tenant acme from d1 to default \(refused for [\d,]+ ms\)\.$/)
    expect(questions[2]).toContain('Move tenant "acme" and all its data from "d1" to "default"?')
    expect((await directory()).placements.map((p) => [p.tenant, p.database, p.state])).toEqual([['acme', 'default', 'placed']])
    expect(await placed.databases.default!.sql(`select name from queen.queues where tenant_id = 'acme'`)).toHaveLength(1)
    await expect.poll(() => row.textContent(), POLL).toContain('default')
    await close(page)
  })

  it('shows a read-only token and a tenant-bound admin token no placement action, and refuses their forged writes', async () => {
    const { version } = await directory()
    const readOnly = await token({ sub: 'viewer', role: 'read-only' })
    const page = await openAs(readOnly)
    await expect.poll(() => page.getByTestId('not-admin').count(), POLL).toBe(1)
    await page.waitForLoadState('networkidle')
    expect(await page.locator('[data-action]').count()).toBe(0)
    expect(await page.getByTestId('placement-list').count()).toBe(0)
    await shot(page, 'read-only')
    await close(page)

    // Admin, but bound to tenant ops: may neither read the directory (it names every tenant) nor
    // change it (broker-wide state).
    const bound = await token({ sub: 'ops-admin', role: 'admin', tenant: 'ops' })
    const boundPage = await openAs(bound)
    await expect.poll(() => boundPage.getByTestId('tenant-bound').count(), POLL).toBe(1)
    expect(await boundPage.getByTestId('placement-list').count()).toBe(0)
    expect(await boundPage.content()).not.toContain('acme')
    expect(await boundPage.locator('[data-action]').count()).toBe(0)
    expect(await boundPage.getByTestId('place-form').count()).toBe(0)
    await close(boundPage)

    for (const jwt of [readOnly, bound]) {
      expect((await call(jwt, 'PUT', '/api/v1/system/placements/acme', { database: 'd1' })).status).toBe(403)
      expect((await call(jwt, 'POST', '/api/v1/system/placements/acme/move', { to: 'd1' })).status).toBe(403)
    }
    const after = await directory()
    expect(after.version).toBe(version)
    expect(after.placements.map((p) => [p.tenant, p.database])).toEqual([['acme', 'default']])
  })
})
