// The console's one HTML document, served at / and every /console/... page path: the client
// router picks the view from the path. The asset directory carries a content hash, so the shell
// (never cached) always names assets that may be cached for ever.
export function shellHtml(assetBase: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Queen Edge console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${assetBase}/console.css">
<script type="module" src="${assetBase}/main.js"></script>
</head>
<body>
<header>
  <a class="brand" href="/" data-nav>Queen Edge</a>
  <nav>
    <a href="/console/queues" data-nav data-section="/console/queues">Queues</a>
    <a href="/console/groups" data-nav data-section="/console/groups">Consumer groups</a>
    <a href="/console/dlq" data-nav data-section="/console/dlq">Dead letters</a>
    <a href="/console/workload" data-nav data-section="/console/workload">Workload</a>
    <a href="/console/streams" data-nav data-section="/console/streams">Streams</a>
    <a href="/console/sinks" data-nav data-section="/console/sinks">Sinks</a>
    <a href="/console/ephemeral" data-nav data-section="/console/ephemeral">Ephemeral</a>
    <a href="/console/kv" data-nav data-section="/console/kv">KV</a>
    <a href="/console/timers" data-nav data-section="/console/timers">Timers</a>
    <a href="/console/traces" data-nav data-section="/console/traces">Traces</a>
    <a href="/console/system" data-nav data-section="/console/system">System</a>
    <a href="/console/placements" data-nav data-section="/console/placements">Placements</a>
  </nav>
  <span id="live" class="live"></span>
  <button id="refresh" type="button" title="Reload this view's figures now">Refresh</button>
  <details id="connection" hidden></details>
</header>
<main id="main"><p class="muted">Loading the console's script…</p><noscript>The console needs JavaScript; the API is at /api/v1.</noscript></main>
</body>
</html>
`
}
