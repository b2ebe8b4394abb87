// `npm run bench`: the benchmark harness arrives with issue #9 (throughput, latency and scaling
// beside the raw PostgreSQL limit and pg-boss, measured in one run). Until then this says so
// and fails, rather than print numbers that measure nothing.
console.error('No benchmarks yet: the harness arrives with issue #9 (see bench/README.md).')
process.exit(1)
