// Every page of the broker (see http/page.ts): GET-only documents served without the route guard.
import type { PageDef } from '../http/page.js'
import { consolePages } from './console.js'

export function allPages(): PageDef[] {
  return [...consolePages()]
}
