// The cron trigger under `wrangler dev`, which never fires one by itself: at each whole minute, the
// cadence of wrangler.toml's `* * * * *`, ask wrangler (started with --test-scheduled) to run the
// Worker's scheduled() through its /__scheduled route. The lanes then run locally as they do
// deployed: each claims its lease, so a manual trigger in between is harmless.

/** wrangler.toml's [triggers] crons; test/dev-edge.test.ts keeps the two equal. */
export const CRON = '* * * * *'

/** Milliseconds from `now` to the next whole minute, when a `* * * * *` trigger fires. */
export function untilNextMinute(now: number): number {
  return 60_000 - (now % 60_000)
}

export function scheduledUrl(base: string): string {
  return `${base}/__scheduled?cron=${encodeURIComponent(CRON)}`
}

export interface CronTicker {
  stop(): void
}

export function startCron(base: string, log: (line: string) => void): CronTicker {
  let timer: NodeJS.Timeout | undefined
  let stopped = false
  const tick = async () => {
    try {
      const res = await fetch(scheduledUrl(base))
      if (!res.ok) log(`dev:edge: scheduled() trigger answered ${res.status}`)
      await res.body?.cancel()
    } catch (error) {
      log(`dev:edge: scheduled() not triggered: ${(error as Error).message}`)
    }
  }
  const arm = () => {
    if (stopped) return
    timer = setTimeout(() => {
      void tick()
      arm()
    }, untilNextMinute(Date.now()))
    timer.unref()
  }
  arm()
  return {
    stop() {
      stopped = true
      clearTimeout(timer)
    },
  }
}
