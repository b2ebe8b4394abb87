import { startEmbeddedPostgres } from '../src/db/embedded.js'
import { migrate } from '../src/db/migrate.js'
import { createNodePool } from '../src/db/node-pool.js'
const server = await startEmbeddedPostgres({ dataDir: '/tmp/eph-lab/db' })
const setup = createNodePool({ connectionString: server.url, max: 1 })
await migrate(setup, { statementTimeoutMs: 60_000 })
await setup.end()
console.log(server.url)
setInterval(() => {}, 1 << 30)
