// A TCP proxy between the broker and PostgreSQL that makes commits ambiguous: it forwards the
// client's bytes untouched and reads the server's replies as protocol messages (type byte, int32
// length). Each call ends with ReadyForQuery ('Z'), which PostgreSQL sends only after the implicit
// transaction of the call has committed; with probability `dropRate` the proxy destroys both
// sockets instead of forwarding that reply. The commit happened, the broker never hears of it.
// The first 'Z' of a connection (the end of its startup) always passes.
// A trap (`trapNextCommit`) makes one chosen call's commit deterministic: the first call whose SQL
// text contains a marker is held at its ReadyForQuery, a callback runs (e.g. SIGKILL the broker),
// and then both sockets are destroyed: committed, and its answer never delivered.
import { createServer, connect, type Server, type Socket } from 'node:net'

export interface CommitDropProxy {
  port: number
  /** Replies dropped after a commit, and replies forwarded. */
  readonly dropped: number
  readonly forwarded: number
  setDropRate(rate: number): void
  /** Holds the answer of the next call whose SQL contains `marker`, runs `onCommitted`, then cuts the connection. */
  trapNextCommit(marker: string, onCommitted: () => Promise<void>): Promise<void>
  close(): Promise<void>
}

export async function startCommitDropProxy(target: { host: string; port: number }, dropRate: number, random: () => number = Math.random): Promise<CommitDropProxy> {
  let rate = dropRate
  let trap: { marker: string; onCommitted: () => Promise<void>; sprung: () => void } | null = null
  let dropped = 0
  let forwarded = 0
  const sockets = new Set<Socket>()
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host)
    sockets.add(client).add(upstream)
    const end = () => {
      client.destroy()
      upstream.destroy()
      sockets.delete(client)
      sockets.delete(upstream)
    }
    client.on('error', end).on('close', end)
    upstream.on('error', end).on('close', end)
    // The client's bytes since the last answer, read only while a trap is set (the SQL text of a
    // call travels in its Parse or Query message).
    let sentText = ''
    let trapped = false
    client.on('data', (chunk: Buffer) => {
      if (trap && !trapped) {
        sentText = (sentText + chunk.toString('latin1')).slice(-65_536)
        if (sentText.includes(trap.marker)) trapped = true
      }
      upstream.write(chunk)
    })
    let pending = Buffer.alloc(0)
    let started = false
    upstream.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk])
      let at = 0
      let sent = 0
      while (pending.length - at >= 5) {
        const length = pending.readUInt32BE(at + 1)
        if (pending.length - at < 1 + length) break
        const type = String.fromCharCode(pending[at]!)
        at += 1 + length
        if (type !== 'Z') continue
        if (!started) started = true
        else if (trapped && trap) {
          const sprung = trap
          trap = null
          client.pause()
          upstream.pause()
          void sprung.onCommitted().finally(() => {
            end()
            sprung.sprung()
          })
          return
        } else if (random() < rate) {
          dropped++
          end()
          return
        } else forwarded++
        client.write(pending.subarray(sent, at))
        sent = at
        sentText = ''
      }
      // Messages outside a call (authentication before the first 'Z', notices) pass at once.
      if (!started && at > sent) {
        client.write(pending.subarray(sent, at))
        sent = at
      }
      pending = pending.subarray(sent)
    })
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  const address = server.address()
  if (typeof address !== 'object' || !address) throw new Error('proxy has no port')
  return {
    port: address.port,
    get dropped() {
      return dropped
    },
    get forwarded() {
      return forwarded
    },
    setDropRate: (r) => void (rate = r),
    trapNextCommit: (marker, onCommitted) => new Promise<void>((sprung) => void (trap = { marker, onCommitted, sprung })),
    close: () =>
      new Promise<void>((done) => {
        for (const s of sockets) s.destroy()
        server.close(() => done())
      }),
  }
}
