// /console/assets/<hash>/console.css: one small stylesheet, system fonts, no external requests.
export const CONSOLE_CSS = `
:root { color-scheme: light dark; --fg: #1d2430; --muted: #667085; --line: #e3e7ee; --bg: #f7f8fa; --panel: #fff; --head: #fafbfc; --code: #f4f5f7; --hover: #efeafd;
  --accent: #5b3cc4; --on-accent: #fff; --ok: #19794a; --warn: #b54708; --bad: #b42318; --warn-bg: #fffaeb; --ok-bg: #ecfdf3; --bad-bg: #fef3f2; --late: #fff4e5; }
/* Dark mode follows the system setting; every colour below goes through these variables. */
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e8ee; --muted: #9aa3b2; --line: #2c3340; --bg: #12151b; --panel: #1a1f27; --head: #202631; --code: #232a35; --hover: #2a2446;
    --accent: #a48cf5; --on-accent: #12151b; --ok: #4fc98b; --warn: #f0a35a; --bad: #f38b80; --warn-bg: #33270f; --ok-bg: #10291d; --bad-bg: #3a1a17; --late: #2f2412; }
}
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; align-items: center; gap: 16px; padding: 10px 20px; background: var(--panel); border-bottom: 1px solid var(--line); flex-wrap: wrap; }
.brand { font-weight: 700; color: var(--accent); text-decoration: none; font-size: 16px; }
nav { display: flex; gap: 12px; flex: 1; }
nav a { color: var(--fg); text-decoration: none; padding: 4px 8px; border-radius: 6px; }
nav a.active, nav a:hover { background: var(--hover); color: var(--accent); }
main { padding: 16px 20px 40px; max-width: 1200px; }
h1 { font-size: 20px; margin: 4px 0 12px; }
h2 { font-size: 15px; margin: 22px 0 8px; }
a { color: var(--accent); }
.title { display: flex; align-items: center; gap: 12px; flex-wrap: wrap; }
.title h1 { margin-right: auto; }
.actions { display: flex; gap: 12px; }
table { border-collapse: collapse; width: 100%; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; overflow: hidden; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--head); font-weight: 600; color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
table.compact { width: auto; min-width: 420px; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr:last-child td { border-bottom: 0; }
.muted { color: var(--muted); }
.badge { font-size: 12px; padding: 2px 8px; border-radius: 999px; border: 1px solid; }
.badge.fresh { color: var(--ok); border-color: var(--ok); background: var(--ok-bg); }
.badge.stale { color: var(--warn); border-color: var(--warn); background: var(--warn-bg); font-weight: 600; margin-left: 6px; }
.error { padding: 10px 12px; border: 1px solid var(--bad); background: var(--bad-bg); color: var(--bad); border-radius: 8px; }
.flash { padding: 8px 12px; border: 1px solid var(--ok); background: var(--ok-bg); color: var(--ok); border-radius: 8px; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(340px, 1fr)); gap: 12px; margin-top: 18px; }
.chart-box { margin: 0; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 10px; }
.chart-box figcaption { font-weight: 600; font-size: 13px; }
.chart { width: 100%; height: auto; display: block; }
.chart .grid { stroke: var(--line); }
.chart .tick { font-size: 10px; fill: var(--muted); }
.chart .line { fill: none; stroke-width: 2; }
.line.pending { stroke: #5b3cc4; } .line.ingested { stroke: #1570ef; } .line.processed { stroke: #19794a; }
.dot.pending { fill: #5b3cc4; } .dot.ingested { fill: #1570ef; } .dot.processed { fill: #19794a; }
.legend { display: flex; gap: 12px; font-size: 12px; color: var(--muted); }
.legend .key::before { content: ""; display: inline-block; width: 10px; height: 3px; margin-right: 4px; vertical-align: middle; background: currentColor; }
.key.pending { color: #5b3cc4; } .key.ingested { color: #1570ef; } .key.processed { color: #19794a; }
.options-form { display: grid; grid-template-columns: repeat(auto-fill, minmax(260px, 1fr)); gap: 10px 16px; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 14px; }
.field { display: flex; flex-direction: column; gap: 3px; font-size: 13px; font-family: ui-monospace, monospace; }
.field.check { flex-direction: row; align-items: center; gap: 8px; }
input[type=text], input[type=number], input[type=password], select { font: inherit; padding: 5px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--panel); color: var(--fg); }
.buttons { grid-column: 1 / -1; display: flex; gap: 14px; align-items: center; }
button { font: inherit; padding: 5px 12px; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent); color: var(--on-accent); cursor: pointer; }
button.action { background: var(--panel); color: var(--accent); padding: 2px 10px; }
button.danger { background: var(--panel); color: var(--bad); border-color: var(--bad); padding: 2px 10px; }
#refresh { background: var(--panel); color: var(--accent); }
#connection summary { cursor: pointer; color: var(--muted); }
.connect { display: flex; gap: 8px; align-items: center; margin-top: 6px; flex-wrap: wrap; }
.status { grid-column: 1 / -1; margin: 0; color: var(--muted); }
.payload { max-width: 720px; max-height: 360px; overflow: auto; margin: 0; background: var(--code); padding: 8px; border-radius: 6px; font-size: 12px; }
.state.stable { color: var(--ok); } .state.lagging { color: var(--warn); } .state.dead { color: var(--bad); }
.warn { color: var(--warn); } .ok { color: var(--ok); }
tr.lagging td { background: var(--late); }
tr.rowlink { cursor: pointer; }
tr.rowlink:hover td, tr.rowlink:focus td { background: var(--hover); }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
.live { color: var(--muted); font-size: 12px; }
.live[data-state=backoff] { color: var(--warn); font-weight: 600; }
.live-choice { color: var(--muted); font-size: 12px; margin-left: 6px; }
.live-choice select { padding: 1px 4px; font-size: 12px; }
.inline-form { display: flex; gap: 8px; align-items: center; }
.pager { display: flex; gap: 4px; flex-wrap: wrap; align-items: center; }
.line.lag0 { stroke: #b54708; } .line.lag1 { stroke: #1570ef; } .line.lag2 { stroke: #19794a; } .line.lag3 { stroke: #c11574; }
.dot.lag0 { fill: #b54708; } .dot.lag1 { fill: #1570ef; } .dot.lag2 { fill: #19794a; } .dot.lag3 { fill: #c11574; }
.key.lag0 { color: #b54708; } .key.lag1 { color: #1570ef; } .key.lag2 { color: #19794a; } .key.lag3 { color: #c11574; }
code.short { cursor: help; }
code { font-family: ui-monospace, monospace; font-size: 13px; }
`
