// The options editor. It prefills every one of the 21 options from the detail route and sends
// only the ones the operator changed, in merge mode, so an option nobody touched keeps its stored
// value even if the queue was edited elsewhere since the form loaded.
import { api, messageOf, seg, statusOf } from './api.js'
import { h, link, orderedOptions, type Child, type Navigate } from './dom.js'
import type { OptionValue, QueueDetail } from './queue.js'

function field(key: string, value: OptionValue): HTMLLabelElement {
  const id = 'opt-' + key
  if (typeof value === 'boolean') {
    return h('label', { class: 'field check', for: id }, h('input', { id, name: key, type: 'checkbox', checked: value }), key)
  }
  const type = typeof value === 'number' ? 'number' : 'text'
  return h('label', { class: 'field', for: id }, h('span', {}, key),
    h('input', { id, name: key, type, value: String(value ?? ''), step: type === 'number' ? 'any' : null }))
}

/** The changed options, typed like the originals; throws on a number field that is not a number. */
function changes(form: HTMLFormElement, original: Record<string, OptionValue>): Record<string, OptionValue> {
  const out: Record<string, OptionValue> = {}
  for (const [key, was] of Object.entries(original)) {
    // Every option has its input: field() drew one per key of original.
    const input = form.elements.namedItem(key) as HTMLInputElement
    let now: OptionValue
    if (typeof was === 'boolean') now = input.checked
    else if (typeof was === 'number') {
      if (input.value.trim() === '' || !Number.isFinite(Number(input.value))) throw new Error(key + ' must be a number')
      now = Number(input.value)
    } else now = input.value
    // A null the form showed as an empty field is not an edit.
    if (was === null && now === '') continue
    if (now !== was) out[key] = now
  }
  return out
}

export async function editView(name: string, navigate: Navigate): Promise<Child[]> {
  const q = await api<QueueDetail>('/api/v1/resources/queues/' + seg(name))
  const status = h('p', { class: 'status', role: 'status' })
  // method=post: should the script ever fail to intercept the submit, nothing lands in the URL.
  const form = h('form', { method: 'post', class: 'options-form', 'data-testid': 'edit-form' },
    orderedOptions(q.options).map(([k, v]) => field(k, v)),
    h('div', { class: 'buttons' }, h('button', { type: 'submit' }, 'Save changed options'), link('/console/queues/' + seg(name), 'Cancel')),
    status)
  form.addEventListener('submit', async (event) => {
    event.preventDefault()
    let changed: Record<string, OptionValue>
    try {
      changed = changes(form, q.options)
    } catch (error) {
      status.textContent = messageOf(error)
      return
    }
    if (Object.keys(changed).length === 0) {
      status.textContent = 'Nothing changed.'
      return
    }
    status.textContent = 'Saving…'
    try {
      await api('/api/v1/configure', { method: 'POST', body: { queue: name, mode: 'merge', options: changed } })
      navigate('/console/queues/' + seg(name), 'Saved: ' + Object.keys(changed).join(', '))
    } catch (error) {
      const code = statusOf(error)
      status.textContent = 'Not saved: ' + (code ? code + ' ' : '') + messageOf(error)
    }
  })
  return [
    h('h1', {}, 'Edit options of ', q.name),
    h('p', { class: 'muted' }, 'Prefilled from the queue as stored. Only the options you change are sent (configure in merge mode); the others keep their values.'),
    form,
  ]
}
