// src/http/gzip-splice.ts: a head compressed once plus a per-call tail must read back, through
// zlib's own decoder, as exactly the two joined; and Accept-Encoding is read as RFC 9110 says.
import { gunzipSync } from 'node:zlib'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { acceptsGzip, gzipHead, gzipWithTail } from '../src/http/gzip-splice.js'
import { nodeDeflater } from '../src/node-deflater.js'

const joined = (a: Uint8Array, b: Uint8Array) => Buffer.concat([a, b])
const gzipBytes = (chunks: Uint8Array[]) => Buffer.concat(chunks)

describe('gzipWithTail', () => {
  it('decodes to head + tail for any bytes, the empty head and tail included', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 200_000 }), fc.uint8Array({ maxLength: 300 }), async (head, tail) => {
        const gz = gzipBytes(gzipWithTail(nodeDeflater, await gzipHead(nodeDeflater, head), tail))
        expect(gunzipSync(gz).equals(joined(head, tail))).toBe(true)
      }),
      { numRuns: 60, seed: 22 },
    )
  })

  it('serves many tails from one compressed head, each checked by its own CRC and length', async () => {
    const head = new TextEncoder().encode(`{"queues":[${'{"name":"q","pending":1},'.repeat(5000)}{}],"statsAge":`)
    const compressed = await gzipHead(nodeDeflater, head)
    expect(compressed.deflated.byteLength).toBeLessThan(head.byteLength / 20)
    for (const age of ['-1', '0.5', '12.345']) {
      const text = gunzipSync(gzipBytes(gzipWithTail(nodeDeflater, compressed, new TextEncoder().encode(`${age}}`)))).toString()
      expect(JSON.parse(text).statsAge).toBe(Number(age))
    }
  })

  it('refuses a tail longer than one stored block', async () => {
    const head = await gzipHead(nodeDeflater, new Uint8Array(10))
    expect(() => gzipWithTail(nodeDeflater, head, new Uint8Array(65_536))).toThrow(RangeError)
  })
})

describe('acceptsGzip', () => {
  it.each([
    ['gzip', true],
    ['gzip, deflate, br', true],
    ['br;q=1.0, GZIP;q=0.5', true],
    ['x-gzip', true],
    ['*', true],
    ['gzip;q=0', false],
    ['gzip;q=0.000', false],
    ['*;q=0', false],
    ['identity', false],
    ['deflate, br', false],
    ['*, gzip;q=0', false],
    ['', false],
    [undefined, false],
  ])('%s → %s', (header, expected) => {
    expect(acceptsGzip(header)).toBe(expected)
  })
})
