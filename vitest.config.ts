// Three projects over one PostgreSQL (test/global-setup.ts): `node` runs everything but the edge
// suite, test/chaos included in its short variant (`npm run chaos` sets QUEEN_CHAOS=full and runs
// test/chaos alone at full length); `workerd` runs the real worker bundle; `pooler` re-runs the HTTP suite through
// PgBouncer in transaction mode. Without a pgbouncer binary the pooler project is left out with a
// printed notice naming the apt package (never silently; test/helpers/optional.ts).
import { defineConfig } from 'vitest/config'
import { available, pgbouncerBinary } from './test/helpers/optional.js'

const hasPgBouncer = available(
  pgbouncerBinary,
  'the pooler project (the HTTP suite through PgBouncer) and the PgBouncer variants of test/driver-conformance.test.ts and test/placement.test.ts',
)

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'node', include: ['test/**/*.test.ts'], exclude: ['test/edge/**'] } },
      { extends: true, test: { name: 'workerd', include: ['test/edge/**/*.test.ts'] } },
      ...(hasPgBouncer
        ? [{ extends: true as const, test: { name: 'pooler', include: ['test/http/**/*.test.ts'], env: { QUEEN_TEST_POOLER: '1' } } }]
        : []),
    ],
  },
})
