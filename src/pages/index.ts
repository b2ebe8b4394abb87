// Every page of the broker (see http/page.ts): GET documents served without the route guard.
import type { PageDef } from '../http/page.js'
import { consolePages } from './console.js'
import { openApiPages } from './openapi.js'

export function allPages(): PageDef[] {
  return [...openApiPages, ...consolePages()]
}
