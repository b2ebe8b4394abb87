import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { ROUTES_DOC, renderRoutesDoc } from '../scripts/routes.js'

describe('docs/routes.md', () => {
  it('is generated from the route registry (run `npm run routes` when this fails)', () => {
    expect(readFileSync(ROUTES_DOC, 'utf8')).toBe(renderRoutesDoc())
  })
})
