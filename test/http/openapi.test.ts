// GET /openapi.json and GET /docs (issue #11): the document lists exactly the registered routes with
// their role sets, its schemas are the ones the routes validate with, and each route answers the
// verdict of its own schema. Both pages are public when JWT is on.
import { readdirSync, readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { queryObject } from '../../src/http/query-schema.js'
import type { RouteSpec } from '../../src/http/route.js'
import { fieldColon, fieldSpace, validate } from '../../src/http/validate.js'
import { openApiPath, pathParams } from '../../src/openapi/document.js'
import { configureBody } from '../../src/routes/configure.js'
import { allRoutes } from '../../src/routes/index.js'
import { pushBody } from '../../src/routes/push.js'
import { transactionBody } from '../../src/routes/transaction.js'
import { VERSION } from '../../src/version.js'
import { testApp, type TestApp } from '../helpers/app.js'
import { freshDatabase, type TestDatabase } from '../helpers/database.js'
import { SECRET } from '../helpers/tokens.js'

const routes = allRoutes(VERSION)
const jsonSchema = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' })

let database: TestDatabase
let open: TestApp
let secured: TestApp
let doc: any

beforeAll(async () => {
  database = await freshDatabase()
  open = await testApp({ database })
  secured = await testApp({ database, env: { JWT_ENABLED: 'true', JWT_SECRET: SECRET } })
  doc = (await open.json('GET', '/openapi.json')).body
})

afterAll(async () => {
  await open?.close()
  await secured?.close()
  await database?.drop()
})

const operationOf = (r: RouteSpec) => doc.paths[openApiPath(r.path)]?.[r.method.toLowerCase()]

describe('/openapi.json', () => {
  it('lists every registered route, and only those, with its method, path, summary and accepted roles', () => {
    for (const r of routes) {
      const op = operationOf(r)
      expect(op, `${r.method} ${r.path}`).toBeDefined()
      expect(op.summary).toBe(r.summary)
      expect(op['x-queen-roles']).toEqual([...r.roles])
      expect(op['x-queen-tenant']).toBe(r.tenant === 'required')
      expect(op['x-queen-body']).toBe(r.body)
      expect(op['x-queen-broker-wide'] === true).toBe(r.brokerWide === true)
    }
    const documented = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item as object).map((m) => `${m.toUpperCase()} ${path}`))
    expect(documented.sort()).toEqual(routes.map((r) => `${r.method} ${openApiPath(r.path)}`).sort())
    expect(routes.every((r) => r.summary.trim().length > 0)).toBe(true)
  })

  it('documents each request body as z.toJSONSchema of the very schema the route validates with', () => {
    // The routes hold the exported schema objects themselves, not copies.
    const find = (method: string, path: string) => routes.find((r) => r.method === method && r.path === path)!
    expect(find('POST', '/api/v1/push').request?.body).toBe(pushBody)
    expect(find('POST', '/api/v1/configure').request?.body).toBe(configureBody)
    expect(find('POST', '/api/v1/transaction').request?.body).toBe(transactionBody)
    expect(operationOf(find('POST', '/api/v1/push')).requestBody.content['application/json'].schema).toEqual(jsonSchema(pushBody))
    expect(operationOf(find('POST', '/api/v1/transaction')).requestBody.content['application/json'].schema).toEqual(jsonSchema(transactionBody))
    expect(operationOf(find('POST', '/api/v1/kv')).requestBody.content['application/json'].schema).toEqual(jsonSchema(find('POST', '/api/v1/kv').request!.body!))
    for (const r of routes) {
      const body = operationOf(r).requestBody
      if (r.body === 'none') expect(body, `${r.method} ${r.path}`).toBeUndefined()
      else {
        expect(body.required, `${r.method} ${r.path}`).toBe(r.body === 'required')
        expect(body.content['application/json'].schema).toEqual(r.request?.body ? jsonSchema(r.request.body) : { type: 'object' })
      }
    }
  })

  it('declares every path parameter and every query parameter of the query schema', () => {
    for (const r of routes) {
      const params = operationOf(r).parameters as { name: string; in: string; required: boolean }[]
      const inPath = params.filter((p) => p.in === 'path')
      expect(inPath.map((p) => p.name), `${r.method} ${r.path}`).toEqual(pathParams(r.path))
      expect(inPath.every((p) => p.required)).toBe(true)
      const query = r.request?.query ? Object.keys((jsonSchema(r.request.query) as { properties?: object }).properties ?? {}) : []
      expect(params.filter((p) => p.in === 'query').map((p) => p.name), `${r.method} ${r.path}`).toEqual(query)
    }
    const dlq = operationOf(routes.find((r) => r.path === '/api/v1/dlq')!)
    expect(dlq.parameters.find((p: { name: string }) => p.name === 'limit')).toMatchObject({ in: 'query', required: false, schema: { type: 'string', pattern: '^\\d+$' } })
  })

  it('is OpenAPI 3.1 in shape: every $ref resolves, operationIds are unique, path templates match their parameters', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/)
    expect(doc.info).toMatchObject({ title: expect.any(String), version: VERSION })
    const refs: string[] = []
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk)
      else if (node && typeof node === 'object') {
        for (const [key, value] of Object.entries(node)) {
          if (key === '$ref') refs.push(value as string)
          else walk(value)
        }
      }
    }
    walk(doc)
    expect(refs.length).toBeGreaterThan(0)
    for (const ref of new Set(refs)) {
      expect(ref.startsWith('#/'), ref).toBe(true)
      const target = ref
        .slice(2)
        .split('/')
        .reduce<any>((at, key) => at?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc)
      expect(target, ref).toBeDefined()
    }
    const ids = Object.values(doc.paths).flatMap((item) => Object.values(item as Record<string, { operationId: string }>).map((op) => op.operationId))
    expect(new Set(ids).size).toBe(ids.length)
    for (const [path, item] of Object.entries(doc.paths)) {
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1])
      for (const op of Object.values(item as Record<string, { parameters: { name: string; in: string }[]; responses: object }>)) {
        expect(op.parameters.filter((p) => p.in === 'path').map((p) => p.name)).toEqual(templated)
        expect(Object.keys(op.responses).length).toBeGreaterThan(0)
      }
    }
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' })
    expect(doc.components.schemas.Error.required).toEqual(['error', 'code'])
  })

  it('is served with a token-free request when JWT is on, as JSON that may be cached', async () => {
    const res = await secured.request('/openapi.json')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    expect(res.headers.get('cache-control')).toMatch(/max-age=\d+/)
    expect(await res.json()).toEqual(doc)
    // The API itself still refuses a token-free request.
    expect((await secured.json('GET', '/api/v1/resources/queues')).status).toBe(401)
  })

  it('documents the tenancy header on tenant routes only when tenancy is on', async () => {
    const tenanted = await testApp({ database, env: { QUEEN_TENANCY_HEADER: 'x-tenant' } })
    try {
      const tdoc = (await tenanted.json('GET', '/openapi.json')).body
      for (const r of routes) {
        const header = tdoc.paths[openApiPath(r.path)][r.method.toLowerCase()].parameters.find((p: { in: string }) => p.in === 'header')
        expect(header?.name, `${r.method} ${r.path}`).toBe(r.tenant === 'required' ? 'x-tenant' : undefined)
      }
      expect(Object.values(doc.paths).flatMap((item) => Object.values(item as Record<string, { parameters: { in: string }[] }>)).some((op) => op.parameters.some((p) => p.in === 'header'))).toBe(false)
    } finally {
      await tenanted.close()
    }
  })
})

describe('/docs', () => {
  it('answers 200 text/html without a token when JWT is on, naming every route, and loads nothing from the network', async () => {
    const res = await secured.request('/docs')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/html/)
    const html = await res.text()
    for (const r of routes) {
      expect(html, r.path).toContain(`<code>${openApiPath(r.path)}</code>`)
      expect(html).toContain(r.summary.replace(/&/g, '&amp;').replace(/'/g, '&#39;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;'))
    }
    expect(html).toContain('href="/openapi.json"')
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)="https?:/i)
    expect(html).not.toMatch(/@import|url\(/)
  })
})

/** An input the schema refuses, from a few generic candidates; undefined when it refuses none. */
function refused(schema: z.ZodType, candidates: unknown[]): unknown {
  return candidates.find((c) => !schema.safeParse(c).success)
}

describe('routes validate with their documented schemas', () => {
  it('answers every input its body or query schema refuses with 400 and that schema’s own text', async () => {
    let checked = 0
    for (const r of routes) {
      const path = r.path.replace(/:([A-Za-z0-9_]+)/g, 'p')
      if (r.request?.query) {
        const props = Object.keys((jsonSchema(r.request.query) as { properties?: object }).properties ?? {})
        const urls = [`${path}?${props.map((p) => `${p}=-x`).join('&')}`, ...props.map((p) => `${path}?${p}=-x`)]
        const url = urls.find((u) => !r.request!.query!.safeParse(queryObject(`http://h${u}`)).success)
        if (url !== undefined) {
          const expected = (() => {
            try {
              validate(r.request!.query!, queryObject(`http://h${url}`), fieldSpace)
            } catch (error) {
              return (error as Error).message
            }
          })()
          const res = await open.json(r.method, url, r.body === 'none' ? undefined : {})
          expect({ status: res.status, body: res.body }, `${r.method} ${url}`).toEqual({ status: 400, body: { error: expected, code: r.badRequestCode ?? 'invalid_request' } })
          checked++
        }
      }
      if (r.request?.body) {
        const props = Object.keys((jsonSchema(r.request.body) as { properties?: object }).properties ?? {})
        const body = refused(r.request.body, [{}, Object.fromEntries(props.map((p) => [p, { wrong: [] }]))])
        expect(body, `${r.method} ${r.path}: no generic candidate is refused`).toBeDefined()
        const expected = (() => {
          try {
            validate(r.request!.body!, body, fieldColon)
          } catch (error) {
            return (error as Error).message
          }
        })()
        const res = await open.json(r.method, path, body)
        expect({ status: res.status, body: res.body }, `${r.method} ${r.path} ${JSON.stringify(body)}`).toEqual({ status: 400, body: { error: expected, code: r.badRequestCode ?? 'invalid_request' } })
        checked++
      }
    }
    expect(checked).toBeGreaterThan(30)
  })

  it('no route handler reads the raw body, query or path: input reaches handlers only through route()', () => {
    const dir = new URL('../../src/routes/', import.meta.url)
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
      const source = readFileSync(new URL(file, dir), 'utf8')
      for (const raw of ['c.var.body', 'c.req.param(', 'c.req.query(', 'c.req.queries(', 'c.req.json(', 'c.req.url', "c.get('body')"]) {
        expect(source.includes(raw), `src/routes/${file} reads ${raw}`).toBe(false)
      }
    }
  })
})
