// CPU per process from /proc, for the cell bench: the broker, PostgreSQL (the postmaster, its live
// children and the children it has already reaped) and this loader, plus the whole machine, so a
// point's table says who used the two cores and how busy the machine was besides.
import { readFileSync, readdirSync } from 'node:fs'

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ, 100 on Linux). */
export const TICKS_PER_SECOND = 100

interface StatTimes {
  parent: number
  /** utime + stime. */
  own: number
  /** cutime + cstime: children that exited and were waited for. */
  reaped: number
}

function statTimes(pid: number): StatTimes | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after "(comm)": state ppid … utime(12th) stime cutime cstime.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return { parent: Number(f[1]), own: Number(f[11]) + Number(f[12]), reaped: Number(f[13]) + Number(f[14]) }
  } catch {
    return null
  }
}

/** CPU ticks a process has used itself. */
export const processTicks = (pid: number) => statTimes(pid)?.own ?? 0

export interface PostgresTicks {
  /** The postmaster, its live children and the ones it reaped: every PostgreSQL process. */
  total: number
  /** Live client backends connected to `database` (the broker's connections). */
  backends: number
}

/**
 * PostgreSQL's CPU ticks. A child that exits between two readings moves from "live" to the
 * postmaster's reaped time, so the total stays comparable; a backend that exits leaves `backends`.
 * Client backends are told apart by their process title, "postgres: <user> <database> <host>…".
 */
export function postgresTicks(postmaster: number, database: string): PostgresTicks {
  const root = statTimes(postmaster)
  if (!root) return { total: 0, backends: 0 }
  let total = root.own + root.reaped
  let backends = 0
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry)
    if (!Number.isInteger(pid)) continue
    const t = statTimes(pid)
    if (!t || t.parent !== postmaster) continue
    total += t.own
    let title = ''
    try {
      title = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    } catch {
      continue
    }
    if (title.split(' ')[2] === database) backends += t.own
  }
  return { total, backends }
}

/** This process's CPU in ticks (user + system), on the same scale as the others. */
export function selfTicks(): number {
  const u = process.cpuUsage()
  return ((u.user + u.system) / 1e6) * TICKS_PER_SECOND
}

/** Busy and total ticks of the whole machine (all cores), from /proc/stat. */
export function machineTicks(): { busy: number; total: number } {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/).slice(1).map(Number)
  const total = cpu.reduce((a, b) => a + b, 0)
  const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0)
  return { busy: total - idle, total }
}
