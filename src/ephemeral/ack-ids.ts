// The ephemeral ack's ids, parsed in the broker (docs/ephemeral.md). An id is
// `e:<epoch>:<partition>:<number>` for a first delivery and `…:<number>.<attempts>` for a
// redelivery; the partition may itself hold ':' and '.', so the number is what follows the last
// ':'. Parsing them here costs the broker well under a microsecond an id, where the same string
// work in PostgreSQL was the largest part of an ack's cost there. The rules are those of
// ephemeral_ack_v1's parse in SQL, which a test pins variant by variant.

export type AckStatus = 'completed' | 'failed' | 'retry'
export type AckOutcome = 'acked' | 'redelivered' | 'stale' | 'unknown'

interface Delivery {
  epoch: string
  /** Decimal digits as sent (at most 18, so it fits a bigint); numerically compared through `key`. */
  seq: string
  attempts: number
  key: string
}

const DIGITS = /^[0-9]+$/

/** The delivery an id names, or null when it is not an id this broker mints. */
export function parseEphemeralId(id: string): Delivery | null {
  if (!id.startsWith('e:')) return null
  const second = id.indexOf(':', 2)
  const last = id.lastIndexOf(':')
  // Three ':' at least: after 'e', after the epoch, and before the number.
  if (second < 0 || last <= second) return null
  const epoch = id.slice(2, second)
  if (epoch === '') return null
  const tail = id.slice(last + 1)
  const [seqText = '', attText = '', third = ''] = tail.split('.')
  if (seqText.length === 0 || seqText.length > 18 || !DIGITS.test(seqText)) return null
  if (attText === '' ? tail.includes('.') : attText.length > 9 || !DIGITS.test(attText) || third !== '') return null
  const seq = BigInt(seqText).toString()
  const attempts = attText === '' ? 0 : Number(attText)
  return { epoch, seq, attempts, key: `${seq}.${attempts}` }
}

/** What ephemeral_ack_v2 takes: each delivery the call names, once, with the caller's index. */
export interface ParsedAcks {
  parsed: (Delivery | null)[]
  firsts: boolean[]
  args: { ords: number[]; epochs: string[]; seqs: string[]; attempts: number[]; back: boolean[] }
}

export function parseAcks(acks: { id: string; status: AckStatus }[]): ParsedAcks {
  const seen = new Set<string>()
  const parsed = acks.map((a) => parseEphemeralId(a.id))
  const firsts: boolean[] = []
  const args: ParsedAcks['args'] = { ords: [], epochs: [], seqs: [], attempts: [], back: [] }
  parsed.forEach((d, i) => {
    // A delivery named twice in one call settles once; its repeats answer 'unknown'.
    const first = d !== null && !seen.has(d.key)
    firsts.push(first)
    if (!first) return
    seen.add(d.key)
    args.ords.push(i)
    args.epochs.push(d.epoch)
    args.seqs.push(d.seq)
    args.attempts.push(d.attempts)
    args.back.push(acks[i]!.status !== 'completed')
  })
  return { parsed, firsts, args }
}

/** One verdict per ack, in request order, from what ephemeral_ack_v2 settled. */
export function ackVerdicts(
  acks: { id: string }[],
  { parsed, firsts }: ParsedAcks,
  settled: { epoch: string; acked: number[]; redelivered: number[] },
): { id: string; outcome: AckOutcome }[] {
  const acked = new Set(settled.acked)
  const redelivered = new Set(settled.redelivered)
  return acks.map((a, i) => {
    const d = parsed[i]
    const outcome: AckOutcome =
      d && d.epoch !== settled.epoch ? 'stale'
      : !d || !firsts[i] ? 'unknown'
      : acked.has(i) ? 'acked'
      : redelivered.has(i) ? 'redelivered'
      : 'unknown'
    return { id: a.id, outcome }
  })
}
