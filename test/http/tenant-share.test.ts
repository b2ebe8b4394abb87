// One tenant's share of a process (docs/security.md): parked long polls are capped per tenant and
// per process (429 with Retry-After past the cap), and each tenant's database calls wait behind its
// own (429 tenant_busy when its line is full), so a flooding tenant is refused instead of the others
// being starved. The timing side (B's p99 under A's flood) is bench/tenant-share.ts; here only the
// statuses and the caps are asserted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTenantCallLimiter } from '../../src/tenant-share/call-limiter.js'
import { testApp, type TestApp } from '../helpers/app.js'

const HEADER = 'X-Queen-Tenant'
let app: TestApp
beforeAll(async () => {
  app = await testApp({
    env: { QUEEN_TENANCY_HEADER: HEADER, MAX_PARKED_POLLS_PER_TENANT: '3', MAX_PARKED_POLLS: '5', TENANT_DB_CONCURRENCY: '2', TENANT_DB_QUEUE: '4' },
  })
})
afterAll(() => app.close())

const as = (tenant: string) => ({ [HEADER]: tenant })
const park = (tenant: string, queue: string, timeout = 1500) => app.json('GET', `/api/v1/pop/queue/${queue}?wait=true&timeout=${timeout}`, undefined, as(tenant))

async function parkedNow(): Promise<number> {
  const res = await app.json('GET', '/api/v1/analytics/queue-parked-replicas', undefined, as('ops'))
  return res.body.replicas[0].parkedLongPolls as number
}

async function untilParked(n: number): Promise<void> {
  await expect.poll(parkedNow, { timeout: 5000, interval: 20 }).toBe(n)
}

describe('parked long polls', () => {
  it('past the tenant cap answer 429 too_many_polls with Retry-After, while another tenant still parks', async () => {
    const held = [park('a', 'q1'), park('a', 'q2'), park('a', 'q3')]
    await untilParked(3)
    const refused = await park('a', 'q4')
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('1')
    expect(refused.body).toEqual({ error: 'Too many long polls parked for this tenant; retry shortly', code: 'too_many_polls' })

    // Tenant b is under its own cap: it parks (and is answered 204 at its timeout, not refused).
    const b = [park('b', 'q1'), park('b', 'q2')]
    await untilParked(5)
    // The process cap (5) is reached: a third tenant is refused too, naming the broker.
    const full = await park('c', 'q1')
    expect(full.status).toBe(429)
    expect(full.body.code).toBe('too_many_polls')
    expect(full.body.error).toBe('Too many long polls parked on this broker; retry shortly')

    for (const res of await Promise.all([...held, ...b])) expect(res.status).toBe(204)
    // Places are given back when the polls end.
    await untilParked(0)
    const again = park('a', 'q1', 200)
    expect((await again).status).toBe(204)
  })

  it('are not counted for a pop that does not wait', async () => {
    const held = [park('a', 'w1'), park('a', 'w2'), park('a', 'w3')]
    await untilParked(3)
    expect((await app.json('GET', '/api/v1/pop/queue/w4?wait=false', undefined, as('a'))).status).toBe(204)
    await Promise.all(held)
  })
})

describe("a tenant's database calls", () => {
  it('queue behind its own: a flood of 64 concurrent pushes from one tenant gets 201 or 429 tenant_busy, the other tenant only 201', async () => {
    const item = (tenant: string, i: number) => ({ items: [{ queue: `flood-${tenant}`, partition: `p${i % 4}`, payload: { i } }] })
    const flood = Promise.all(Array.from({ length: 64 }, (_, i) => app.json('POST', '/api/v1/push', item('a', i), as('a'))))
    // Tenant b pushes one at a time (a steady producer) while a floods.
    const steady = (async () => {
      const statuses: number[] = []
      for (let i = 0; i < 8; i++) statuses.push((await app.json('POST', '/api/v1/push', item('b', i), as('b'))).status)
      return statuses
    })()
    const [a, b] = await Promise.all([flood, steady])
    expect(b).toEqual(Array(8).fill(201))
    const statuses = new Set(a.map((r) => r.status))
    expect([...statuses].every((s) => s === 201 || s === 429)).toBe(true)
    const busy = a.filter((r) => r.status === 429)
    expect(busy.length).toBeGreaterThan(0)
    expect(busy[0]!.body).toEqual({ error: 'Too many concurrent requests for this tenant; retry shortly', code: 'tenant_busy' })
    expect(busy[0]!.headers.get('retry-after')).toBe('1')
    // Nothing a refused push carried was written.
    const stored = await app.database.sql<{ n: number }>(
      `select coalesce(sum(p.last_offset + 1), 0)::int as n from queen.log_partitions p join queen.queues q on q.id = p.queue_id where q.name = 'flood-a'`,
    )
    expect(stored[0]!.n).toBe(64 - busy.length)
  })

  it('run at most `concurrency` at once per tenant, first come first served, and never wait behind another tenant', async () => {
    const limiter = createTenantCallLimiter({ concurrency: 2, queue: 2 })
    const gates: (() => void)[] = []
    const order: string[] = []
    const held = (name: string) => () => {
      order.push(name)
      return new Promise<string>((done) => gates.push(() => done(name)))
    }
    const a = ['a1', 'a2', 'a3', 'a4'].map((n) => limiter.run('a', held(n)))
    await Promise.resolve()
    expect(order).toEqual(['a1', 'a2'])
    expect(limiter.load('a')).toEqual({ inFlight: 2, waiting: 2 })
    await expect(limiter.run('a', held('a5'))).rejects.toMatchObject({ status: 429, code: 'tenant_busy' })
    // Tenant b starts at once although a's line is full.
    const b = limiter.run('b', async () => 'b1')
    expect(await b).toBe('b1')
    gates[0]!()
    await a[0]
    await new Promise((r) => setTimeout(r, 0))
    expect(order).toEqual(['a1', 'a2', 'a3'])
    gates[1]!()
    while (gates.length < 4) await new Promise((r) => setTimeout(r, 0))
    expect(order).toEqual(['a1', 'a2', 'a3', 'a4'])
    gates[2]!()
    gates[3]!()
    expect(await Promise.all(a)).toEqual(['a1', 'a2', 'a3', 'a4'])
    expect(limiter.load('a')).toEqual({ inFlight: 0, waiting: 0 })
  })

  it('admit as many requests of a tenant as it has places (concurrency + queue), and never count another tenant against them', () => {
    const limiter = createTenantCallLimiter({ concurrency: 2, queue: 1 })
    const places = [limiter.admit('a'), limiter.admit('a'), limiter.admit('a')]
    expect(() => limiter.admit('a')).toThrow(expect.objectContaining({ status: 429, code: 'tenant_busy' }))
    const b = limiter.admit('b')
    places[0]!()
    // A place given back twice is given back once.
    places[0]!()
    const again = limiter.admit('a')
    expect(() => limiter.admit('a')).toThrow(expect.objectContaining({ code: 'tenant_busy' }))
    for (const give of [again, places[1]!, places[2]!, b]) give()
  })

  /** Calls that run until their gate is opened: `running` lists those started, in order. */
  const heldCalls = () => {
    const gates: (() => void)[] = []
    const running: string[] = []
    const held = (name: string) => () => {
      running.push(name)
      return new Promise<string>((done) => gates.push(() => done(name)))
    }
    return { gates, running, held }
  }
  const tick = () => new Promise((r) => setTimeout(r, 0))

  it('hold a tenant that takes most of the database time to its heavy share while another is active, and the other to its shared share', async () => {
    const limiter = createTenantCallLimiter({ concurrency: 4, queue: 100, shared: 2, heavy: 1, heavyShare: 0.6, activeMs: 300 })
    const { gates, running, held } = heldCalls()
    // Alone, tenant a runs its full share, and its calls take all the database time there is.
    const first = ['a1', 'a2', 'a3', 'a4'].map((n) => limiter.run('a', held(n)))
    await tick()
    expect(running).toEqual(['a1', 'a2', 'a3', 'a4'])
    await new Promise((r) => setTimeout(r, 40))
    for (const gate of gates.splice(0)) gate()
    await Promise.all(first)
    expect(limiter.heavy('a')).toBe(false) // nobody else is active
    // Tenant b calls (briefly): a is now heavy, held to one call; b keeps its shared share of two.
    expect(await limiter.run('b', async () => 'b1')).toBe('b1')
    expect(limiter.heavy('a')).toBe(true)
    expect(limiter.heavy('b')).toBe(false)
    running.length = 0
    const a = ['a5', 'a6', 'a7'].map((n) => limiter.run('a', held(n)))
    const b = ['b2', 'b3', 'b4'].map((n) => limiter.run('b', held(n)))
    await tick()
    expect(running).toEqual(['a5', 'b2', 'b3'])
    expect(limiter.load('a')).toEqual({ inFlight: 1, waiting: 2 })
    expect(limiter.load('b')).toEqual({ inFlight: 2, waiting: 1 })
    while (running.length < 6) {
      for (const gate of gates.splice(0)) gate()
      await tick()
    }
    for (const gate of gates.splice(0)) gate()
    expect(await Promise.all([...a, ...b])).toEqual(['a5', 'a6', 'a7', 'b2', 'b3', 'b4'])
  })

  /** A limiter in which tenant a has just taken all the database time while b was active: a is heavy. */
  async function withHeavyA(options: Partial<Parameters<typeof createTenantCallLimiter>[0]>) {
    const limiter = createTenantCallLimiter({ concurrency: 4, queue: 100, shared: 2, heavy: 1, heavyShare: 0.6, activeMs: 500, ...options })
    await limiter.run('a', () => new Promise((r) => setTimeout(r, 40)))
    await limiter.run('b', async () => 'b')
    expect(limiter.heavy('a')).toBe(true)
    return limiter
  }

  it("start a heavy tenant's next call only after the pause its duty cycle leaves, and never pause the other", async () => {
    const limiter = await withHeavyA({ heavyDuty: 0.25 })
    const ended: number[] = []
    const started: number[] = []
    const call = () => limiter.run('a', async () => {
      started.push(performance.now())
      await new Promise((r) => setTimeout(r, 30))
      ended.push(performance.now())
    })
    await call()
    // b stays active, so a stays heavy: its call of ~30 ms at a duty of 25 % is followed by ~90 ms idle,
    // which b's call, started after a's, does not wait for.
    await limiter.run('b', async () => 'b')
    const order: string[] = []
    await Promise.all([call().then(() => order.push('a')), limiter.run('b', async () => order.push('b'))])
    expect(order).toEqual(['b', 'a'])
    const took = ended[0]! - started[0]!
    expect(started[1]! - ended[0]!).toBeGreaterThanOrEqual(took * 3 - 2)
  })

  it("never pause a heavy tenant's next call longer than one activity window, however long its last call took", async () => {
    const limiter = await withHeavyA({ heavyDuty: 0.001, activeMs: 500 })
    let ended = 0
    await limiter.run('a', async () => {
      await new Promise((r) => setTimeout(r, 20))
      ended = performance.now()
    })
    await limiter.run('b', async () => 'b')
    // At a duty of 0.1 %, 20 ms of call would earn ~20 s of pause; the window caps it at 500 ms.
    let started = 0
    await limiter.run('a', async () => (started = performance.now()))
    expect(started - ended).toBeGreaterThanOrEqual(450)
    expect(started - ended).toBeLessThan(3000)
  })

  it('hold a tenant to its shared share while another tenant is active, and give it its full share back once it is alone', async () => {
    const limiter = createTenantCallLimiter({ concurrency: 4, queue: 100, shared: 2, activeMs: 200 })
    const { gates, running, held } = heldCalls()
    // Alone, tenant a runs its full share.
    const a = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6'].map((n) => limiter.run('a', held(n)))
    await tick()
    expect(running).toEqual(['a1', 'a2', 'a3', 'a4'])
    // Tenant b calls: it starts at once, and a's slots are not passed on while a is above 2.
    expect(await limiter.run('b', async () => 'b1')).toBe('b1')
    gates[0]!()
    gates[1]!()
    await tick()
    expect(running).toEqual(['a1', 'a2', 'a3', 'a4'])
    expect(limiter.load('a')).toEqual({ inFlight: 2, waiting: 2 })
    gates[2]!()
    await tick()
    expect(running).toEqual(['a1', 'a2', 'a3', 'a4', 'a5'])
    expect(limiter.load('a')).toEqual({ inFlight: 2, waiting: 1 })
    // Once b has been quiet for activeMs, a's next call starts what waited first, then itself, up to its full share.
    await new Promise((r) => setTimeout(r, 250))
    const a7 = limiter.run('a', held('a7'))
    await tick()
    // a6 got its slot first; its own code runs a microtask after a7's, which did not wait.
    expect([...running].sort()).toEqual(['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7'])
    expect(limiter.load('a')).toEqual({ inFlight: 4, waiting: 0 })
    for (const gate of gates.slice(3)) gate()
    expect(await Promise.all([...a, a7])).toEqual(['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7'])
    expect(limiter.load('a')).toEqual({ inFlight: 0, waiting: 0 })
  })
})
