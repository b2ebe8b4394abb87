// Preloaded into the broker by bench/memory.ts only (`node --expose-gc --import ./bench/gc-on-signal.mjs`,
// plain JavaScript because it loads before tsx): SIGUSR2 runs a full garbage collection, so the heap
// read from GET /metrics right after is what is live, not what the collector has not reached yet.
// No production code knows about it.
process.on('SIGUSR2', () => {
  globalThis.gc?.()
})
