// The network between an edge function and its database, as bench:edge models it inside the local
// WebSocket bridge (scripts/ws-bridge.ts): every frame waits half the round-trip time each way, and
// every flight the driver sends after hearing from the server is one round trip, counted at the
// bridge as connection setup (startup, authentication) or as a query.
//
// Two placements of connection setup:
// - `per-request`: the Worker opens a WebSocket to the database for each request (Neon's driver, as
//   deployed without Hyperdrive), so the handshake (one RTT here: TCP and the WebSocket upgrade; TLS
//   would add more) and the startup exchange cross the modelled network too;
// - `pooled-at-edge`: setup is free, as with Hyperdrive, whose pooled connections to the origin are
//   already open, so only the queries cross the network.
import type { BridgeLink } from '../scripts/ws-bridge.js'
import { sleep } from './lib.js'

export type SetupPlacement = 'per-request' | 'pooled-at-edge'

export interface LinkShape {
  rttMs: number
  setup: SetupPlacement
}

export interface LinkCounters {
  connections: number
  setupTurns: number
  queryTurns: number
}

// First byte of a frontend message that starts a query: simple Query, or Parse / Bind of the
// extended protocol. Terminate ('X') is sent without waiting for an answer and is no round trip.
const QUERY_START = new Set(['Q'.charCodeAt(0), 'P'.charCodeAt(0), 'B'.charCodeAt(0)])
const TERMINATE = 'X'.charCodeAt(0)

/** A link factory for startWsBridge; `shape` is read at each new connection, so a run can change it. */
export function latencyLink(shape: () => LinkShape, counters: LinkCounters): () => BridgeLink {
  return () => {
    const { rttMs, setup } = shape()
    let queried = false
    let heardFromServer = true
    const wait = (deliver: () => void) => {
      if (rttMs === 0 || (setup === 'pooled-at-edge' && !queried)) deliver()
      else setTimeout(deliver, rttMs / 2)
    }
    return {
      async open() {
        counters.connections++
        if (setup === 'per-request') await sleep(rttMs)
      },
      toServer(data, deliver) {
        const first = data[0]
        if (heardFromServer && first !== TERMINATE) {
          const isQuery = first !== undefined && QUERY_START.has(first)
          if (isQuery) {
            queried = true
            counters.queryTurns++
          } else {
            counters.setupTurns++
          }
          heardFromServer = false
        }
        wait(() => deliver(data))
      },
      toClient(data, deliver) {
        heardFromServer = true
        wait(() => deliver(data))
      },
    }
  }
}
