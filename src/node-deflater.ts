// The Node runtime's compressor for spliced gzip answers (src/http/gzip-splice.ts). zlib's async
// call runs on libuv's thread pool, so compressing a 2.4 MiB listing never stalls the event loop.
// Level 1: at 10 000 queues it compresses ~8.4× in ~18 ms, where level 6 gets ~9× in ~67 ms.
import { promisify } from 'node:util'
import { constants, crc32, deflateRaw } from 'node:zlib'
import type { Deflater } from './http/gzip-splice.js'

const deflateRawAsync = promisify(deflateRaw)

export const nodeDeflater: Deflater = {
  deflateOpen: async (bytes) =>
    new Uint8Array(await deflateRawAsync(bytes, { level: constants.Z_BEST_SPEED, finishFlush: constants.Z_SYNC_FLUSH })),
  crc32: (bytes, value) => crc32(bytes, value),
}
