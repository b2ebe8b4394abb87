// docs/quickstart-js.md's table of every method of Queen's JS `Admin` class: the table must list
// each method exactly once, each route must be one the broker registers, and each must answer the
// status the table gives (2xx) when called as the client calls it, with valid input, in table order.
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { allRoutes } from '../src/routes/index.js'
import { VERSION } from '../src/version.js'
import { testApp, type TestApp } from './helpers/app.js'
import { ack, acksOf, pop, push } from './helpers/engine.js'

// The methods of Admin in smartpricing/queen client-js client-v2/admin (read with the search tool),
// in the class's order.
const ADMIN_METHODS = [
  'getOverview', 'getNamespaces', 'getTasks', 'listQueues', 'getQueue', 'clearQueue', 'getPartitions',
  'listMessages', 'getMessage', 'deleteMessage', 'retryMessage', 'moveMessageToDLQ',
  'getTracesByName', 'getTraceNames', 'getTracesForMessage',
  'getStatus', 'getQueueStats', 'getQueueDetail', 'getAnalytics',
  'listConsumerGroups', 'refreshConsumerStats', 'getConsumerGroup', 'getLaggingConsumers', 'deleteConsumerGroupForQueue', 'seekConsumerGroup',
  'health', 'metrics', 'getMaintenanceMode', 'setMaintenanceMode', 'getPopMaintenanceMode', 'setPopMaintenanceMode',
  'getSystemMetrics', 'getWorkerMetrics', 'getPostgresStats',
]

interface Row {
  method: string
  verb: string
  path: string
  status: number
}

function adminTable(): Row[] {
  const doc = readFileSync(new URL('../docs/quickstart-js.md', import.meta.url), 'utf8')
  const start = doc.indexOf('<!-- admin-table:start -->')
  const end = doc.indexOf('<!-- admin-table:end -->')
  expect(start, 'the admin table markers').toBeGreaterThan(-1)
  return doc
    .slice(start, end)
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => {
      const m = /^\| `(\w+)\([^`]*\)` \| `(GET|POST|PUT|DELETE) ([^`]+)` \| (\d{3}) \|$/.exec(line)
      if (!m) throw new Error(`unparsable admin table row: ${line}`)
      return { method: m[1]!, verb: m[2]!, path: m[3]!, status: Number(m[4]) }
    })
}

const rows = adminTable()

// What each method sends with valid input, as the client builds it (query strings from its
// arguments, `{}` bodies). Path parameters come from the fixture below.
const CALLS: Record<string, { query?: string; body?: unknown; before?: () => Promise<unknown> }> = {
  listQueues: { query: '?limit=10' },
  clearQueue: { query: '?partition=cleared' },
  getPartitions: { query: '?queue=adm-q&minDepth=0' },
  listMessages: { query: '?queue=adm-q' },
  moveMessageToDLQ: { body: {} },
  retryMessage: { body: {} },
  // deleteMessage deletes dead-letter rows only, and retryMessage just moved the one there was.
  deleteMessage: { before: () => app.json('POST', `/api/v1/messages/${params.partitionId}/adm-1/dlq`, {}) },
  getTracesByName: { query: '?limit=10' },
  getQueueDetail: { query: '?includePartitions=false' },
  refreshConsumerStats: { body: {} },
  getLaggingConsumers: { query: '?minLagSeconds=60' },
  seekConsumerGroup: { body: { toEnd: true } },
  deleteConsumerGroupForQueue: { query: '?deleteMetadata=true' },
  setMaintenanceMode: { body: { enabled: false } },
  setPopMaintenanceMode: { body: { enabled: false } },
}

let app: TestApp
let params: Record<string, string>
beforeAll(async () => {
  app = await testApp()
  // A queue with a message to act on, a group with a cursor, a trace name, and a partition to clear.
  const [pushed] = await push(app, [
    { queue: 'adm-q', partition: 'p', payload: { n: 1 }, transactionId: 'adm-1' },
    { queue: 'adm-q', partition: 'cleared', payload: { n: 2 } },
  ])
  const popped = await pop(app, 'adm-q', { consumerGroup: 'adm-g', batch: 10, wait: false })
  await ack(app, acksOf(popped.messages), 'adm-g')
  const trace = await app.json('POST', '/api/v1/traces', { partitionId: pushed!.partition_id, transactionId: 'adm-1', traceNames: ['adm-trace'], data: { step: 1 } })
  expect(trace.status).toBe(201)
  params = { queue: 'adm-q', partitionId: pushed!.partition_id, transactionId: 'adm-1', name: 'adm-trace', group: 'adm-g' }
})
afterAll(() => app.close())

describe("docs/quickstart-js.md: every method of Queen's JS Admin", () => {
  it('lists each Admin method exactly once', () => {
    expect(rows.map((r) => r.method).sort()).toEqual([...ADMIN_METHODS].sort())
  })

  it("maps each method to a route in the broker's route table", () => {
    const registered = new Set(allRoutes(VERSION).map((r) => `${r.method} ${r.path}`))
    for (const r of rows) expect(registered.has(`${r.verb} ${r.path}`), `${r.method}: ${r.verb} ${r.path}`).toBe(true)
  })

  it('answers each call with valid input with the 2xx the table states', async () => {
    for (const r of rows) {
      const call = CALLS[r.method] ?? {}
      await call.before?.()
      const path = r.path.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name]!)) + (call.query ?? '')
      const res = await app.json(r.verb, path, call.body)
      expect(r.status, r.method).toBeGreaterThanOrEqual(200)
      expect(r.status, r.method).toBeLessThan(300)
      expect(res.status, `${r.method}: ${r.verb} ${path} → ${JSON.stringify(res.body)}`).toBe(r.status)
    }
  })
})
