// The start every load scenario shares: a database of the file's own, one queue with a 3 s lease,
// and a broker process over it, stopped and dropped after the file. Read the fields inside a test,
// once beforeAll has filled them.
import { afterAll, beforeAll } from 'vitest'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import { startBroker, type Broker } from './harness.js'

export interface ChaosFixture {
  database: TestDatabase
  broker: Broker
}

export function chaosFixture(queue: string, retryLimit: number): ChaosFixture {
  const fixture = {} as ChaosFixture
  beforeAll(async () => {
    fixture.database = await freshDatabase()
    await fixture.database.sql(`insert into queen.queues (tenant_id, name, lease_time, retry_limit) values ('', $1, 3, $2)`, [queue, retryLimit])
    fixture.broker = await startBroker(fixture.database.url)
  })
  afterAll(async () => {
    await fixture.broker?.stop()
    await fixture.database?.drop()
  })
  return fixture
}
