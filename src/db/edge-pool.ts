// The Workers driver: Neon's serverless Pool over WebSocket, created per request and ended after
// the response (design decision 38); never a module-level pool, because a Worker isolate cannot keep
// sockets across requests. For local runs the driver is pointed at scripts/ws-bridge.ts, a small
// WebSocket-to-TCP bridge in front of a plain PostgreSQL.
import { Pool, neonConfig } from '@neondatabase/serverless'
import type { PoolLike } from './queryable.js'

export interface EdgePoolOptions {
  connectionString: string
  /** host:port of a local WebSocket bridge (dev and tests); unset for Neon itself. */
  wsProxy?: string
}

export function createEdgePool(options: EdgePoolOptions): PoolLike {
  if (options.wsProxy) {
    const proxy = options.wsProxy
    // The bridge speaks plain ws:// and plain PostgreSQL behind it, so TLS pipelining is off.
    neonConfig.wsProxy = (host, port) => `${proxy}/v2?address=${host}:${port}`
    neonConfig.useSecureWebSocket = false
    neonConfig.pipelineTLS = false
    neonConfig.pipelineConnect = false
  }
  return new Pool({ connectionString: options.connectionString, max: 1 }) as unknown as PoolLike
}
