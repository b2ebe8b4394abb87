// Every page of the broker (see http/page.ts): GET-only documents served without the route guard.
import type { PageDef } from '../http/page.js'

export function allPages(): PageDef[] {
  return []
}
