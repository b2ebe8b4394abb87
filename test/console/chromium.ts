// The console's browser tests drive the real Chromium (Debian's, through playwright-core) against
// a broker on a real port. Every test file launches it the same way, opens pages that record their
// script errors, and closes them asserting there were none: a view that threw must fail its test.
import { chromium, type Browser, type Page } from 'playwright-core'
import { expect } from 'vitest'
import { CHROMIUM_PATH } from '../helpers/optional.js'

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    // As root Chromium needs --no-sandbox; the background-networking flags keep it from dialling
    // out (update checks, sync), which a closed network refuses.
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
}

const pageErrors = new WeakMap<Page, Error[]>()

/** A new page that records its script errors, at `url` unless none is given. */
export async function openPage(browser: Browser, url?: string, timeoutMs = 15_000): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  page.setDefaultTimeout(timeoutMs)
  const errors: Error[] = []
  pageErrors.set(page, errors)
  page.on('pageerror', (error) => errors.push(error))
  if (url !== undefined) await page.goto(url)
  return page
}

/** Closes the page and fails the test if its scripts threw. */
export async function closePage(page: Page): Promise<void> {
  await page.close()
  expect(pageErrors.get(page) ?? []).toEqual([])
}

/** The body of a broker answer that must have `status`; anything else fails with what came back. */
export async function ok(res: Promise<{ status: number; body: any }>, status = 200) {
  const answered = await res
  if (answered.status !== status) throw new Error(`expected ${status}, got ${answered.status}: ${JSON.stringify(answered.body)}`)
  return answered.body
}
