// GET /docs: the API reference as one self-contained HTML page, rendered on the server from the
// same document /openapi.json serves. No CDN and no fetch: it works offline and under a strict CSP
// that allows inline style and script, and what a reader sees is exactly the served document.
import type { JsonSchema } from './schema.js'

const escape = (text: unknown) =>
  String(text).replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!)

const typeOf = (schema: JsonSchema | undefined): string => {
  if (!schema) return ''
  if (Array.isArray(schema.enum)) return (schema.enum as unknown[]).map((v) => JSON.stringify(v)).join(' | ')
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as JsonSchema[]).map(typeOf).join(' | ')
  return [schema.type, schema.format, schema.pattern ? `/${schema.pattern}/` : '', schema.maxLength !== undefined ? `≤ ${schema.maxLength} chars` : '']
    .filter(Boolean)
    .join(', ')
}

function parametersTable(parameters: JsonSchema[]): string {
  if (parameters.length === 0) return ''
  const rows = parameters.map((p) => {
    const schema = p.schema as JsonSchema | undefined
    const note = p.description ?? schema?.description ?? ''
    return `<tr><td><code>${escape(p.name)}</code></td><td>${escape(p.in)}</td><td>${p.required ? 'yes' : ''}</td><td>${escape(typeOf(schema))}</td><td>${escape(note)}</td></tr>`
  })
  return `<table><thead><tr><th>parameter</th><th>in</th><th>required</th><th>type</th><th>notes</th></tr></thead><tbody>${rows.join('')}</tbody></table>`
}

function bodySection(op: JsonSchema): string {
  const body = op.requestBody as JsonSchema | undefined
  if (!body) return ''
  const schema = (body.content as Record<string, { schema: JsonSchema }>)['application/json']!.schema
  const { $schema: _dialect, ...shown } = schema
  return `<details><summary>JSON body (${body.required ? 'required' : 'optional'})</summary><pre>${escape(JSON.stringify(shown, null, 2))}</pre></details>`
}

function operationSection(path: string, method: string, op: JsonSchema): string {
  const roles = (op['x-queen-roles'] as string[]).join(', ')
  const flags = [
    `roles: ${roles}`,
    op['x-queen-tenant'] ? 'tenant header' : 'no tenant header',
    `body: ${op['x-queen-body']}`,
    op['x-queen-broker-wide'] ? 'refuses tenant-bound tokens' : '',
    op['x-queen-public'] ? 'public by default (JWT_SKIP_PATHS)' : '',
  ].filter(Boolean)
  return `<section class="op" data-search="${escape(`${method} ${path} ${op.summary} ${roles}`.toLowerCase())}">
<h3><span class="m ${escape(method)}">${escape(method.toUpperCase())}</span> <code>${escape(path)}</code></h3>
<p>${escape(op.summary)}</p>
<p class="flags">${flags.map((f) => `<span>${escape(f)}</span>`).join(' ')}</p>
${parametersTable(op.parameters as JsonSchema[])}${bodySection(op)}</section>`
}

const STYLE = `body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:60rem;padding:1rem 1.5rem;color:#1d232a}
h1{margin-bottom:.2rem}h2{border-bottom:1px solid #d5dae0;padding-top:1rem;text-transform:capitalize}
.op{border:1px solid #d5dae0;border-radius:6px;margin:.8rem 0;padding:.2rem 1rem .6rem}.op h3{font-size:1rem;margin:.6rem 0 .2rem}
.m{border-radius:4px;color:#fff;display:inline-block;font-size:.75rem;min-width:4rem;padding:.1rem .3rem;text-align:center}
.get{background:#2b6cb0}.post{background:#2f855a}.put{background:#b7791f}.delete{background:#c53030}
.flags span{background:#edf0f3;border-radius:4px;font-size:.8rem;margin-right:.3rem;padding:.05rem .4rem}
table{border-collapse:collapse;font-size:.85rem;width:100%}td,th{border-bottom:1px solid #e6e9ed;padding:.2rem .4rem;text-align:left;vertical-align:top}
pre{background:#f6f8fa;font-size:.8rem;overflow:auto;padding:.6rem}#filter{font-size:1rem;padding:.3rem;width:20rem}`

// Filters operations by text; everything is visible without it.
const SCRIPT = `document.getElementById('filter').addEventListener('input',function(e){var q=e.target.value.toLowerCase();
document.querySelectorAll('.op').forEach(function(s){s.hidden=q!==''&&s.dataset.search.indexOf(q)<0})})`

export function renderReference(doc: JsonSchema): string {
  const info = doc.info as { title: string; version: string; description: string }
  const byTag = new Map<string, string[]>()
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, JsonSchema>>)) {
    for (const [method, op] of Object.entries(item)) {
      const tag = (op.tags as string[])[0]!
      byTag.set(tag, [...(byTag.get(tag) ?? []), operationSection(path, method, op)])
    }
  }
  const sections = [...byTag].map(([tag, ops]) => `<h2 id="${escape(tag)}">${escape(tag)}</h2>\n${ops.join('\n')}`)
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escape(info.title)} ${escape(info.version)}</title><style>${STYLE}</style></head>
<body><h1>${escape(info.title)} <small>${escape(info.version)}</small></h1>
<p>${escape(info.description)}</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI ${escape(doc.openapi)}). Errors use one envelope: <code>{"error", "code"}</code>.</p>
<p><input id="filter" type="search" placeholder="filter by path, method, role" aria-label="filter operations"></p>
${sections.join('\n')}
<script>${SCRIPT}</script></body></html>
`
}
