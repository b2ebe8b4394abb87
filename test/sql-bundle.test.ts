import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { BUNDLE_PATH, renderSqlBundle } from '../scripts/build-sql.js'

describe('the generated SQL module', () => {
  it('is up to date with sql/ (run `npm run build:sql` when this fails)', () => {
    expect(readFileSync(BUNDLE_PATH, 'utf8')).toBe(renderSqlBundle())
  })
})
