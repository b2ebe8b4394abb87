// Decodes an AWS Query form (`Action=SendMessageBatch&SendMessageBatchRequestEntry.1.Id=a&…`) into
// the JSON protocol's shape, so one action implementation serves both protocols. Values stay
// strings: the Query protocol has no other type, and actions read numbers and booleans through
// the coercions in ./input.ts, which accept both.
import type { Shape, Shapes } from './shapes.js'

type Tree = { [key: string]: Tree | string }

/** Thrown for a form whose keys contradict each other (`A=1&A.1=2`); the caller answers it as malformed. */
export class QueryDecodeError extends Error {}

export function decodeQuery(params: Iterable<[string, string]>, shapes: Shapes): Record<string, unknown> {
  const tree: Tree = {}
  for (const [name, value] of params) {
    if (name === 'Action' || name === 'Version' || name.startsWith('X-Amz-')) continue
    const path = name.split('.')
    let node = tree
    for (let i = 0; i < path.length - 1; i++) {
      const segment = path[i] as string
      const next = node[segment]
      if (typeof next === 'string') throw new QueryDecodeError(`parameter ${name} conflicts with ${path.slice(0, i + 1).join('.')}`)
      node = next ?? (node[segment] = {})
    }
    const last = path[path.length - 1] as string
    if (typeof node[last] === 'object') throw new QueryDecodeError(`parameter ${name} conflicts with its own members`)
    node[last] = value
  }
  return shapeStructure(tree, shapes)
}

function shapeStructure(tree: Tree, shapes: Shapes): Record<string, unknown> {
  const byQuery = new Map<string, [string, Shape]>()
  for (const [json, shape] of Object.entries(shapes)) byQuery.set(shape.query, [shape.json ?? json, shape])
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(tree)) {
    const known = byQuery.get(key)
    if (known === undefined) {
      out[key] = typeof value === 'string' ? value : shapeStructure(value, {})
      continue
    }
    const [json, shape] = known
    if (typeof value === 'string') throw new QueryDecodeError(`parameter ${key} must have members (${key}.1…)`)
    out[json] = shape.kind === 'list' ? decodeList(value, shape.flat, shape.items) : decodeMap(value, shape.flat, shape.key, shape.value, shape.values)
  }
  return out
}

/** The numbered items of `<name>.N` (flat) or `<name>.member.N`, in number order. */
function numbered(node: Tree, flat: boolean, wrapper: string): (Tree | string)[] {
  let items: Tree | string | undefined = node
  if (!flat) items = node[wrapper]
  if (items === undefined) return []
  if (typeof items === 'string') throw new QueryDecodeError(`expected numbered members under ${wrapper}`)
  const entries = Object.entries(items)
  for (const [index] of entries) if (!/^[1-9]\d*$/.test(index)) throw new QueryDecodeError(`list members are numbered from 1, not ${JSON.stringify(index)}`)
  return entries.sort(([a], [b]) => Number(a) - Number(b)).map(([, v]) => v)
}

function decodeList(node: Tree, flat: boolean, items: Shapes | undefined): unknown[] {
  return numbered(node, flat, 'member').map((item) => (typeof item === 'string' ? item : shapeStructure(item, items ?? {})))
}

function decodeMap(node: Tree, flat: boolean, keyName: string, valueName: string, values: Shapes | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const pair of numbered(node, flat, 'entry')) {
    if (typeof pair === 'string') throw new QueryDecodeError('map entries need a key and a value')
    const key = pair[keyName]
    const value = pair[valueName]
    if (typeof key !== 'string') throw new QueryDecodeError(`map entry is missing its ${keyName}`)
    out[key] = value === undefined ? '' : typeof value === 'string' ? value : shapeStructure(value, values ?? {})
  }
  return out
}
