// Every route of the broker, in registration order. Literal segments are registered before
// parameters (API §3.6), so each family's file lists its literal paths first.
import type { RouteDef } from '../http/route.js'
import { configureRoutes } from './configure.js'
import { healthRoutes } from './health.js'

export function allRoutes(version: string): RouteDef[] {
  return [...healthRoutes(version), ...configureRoutes]
}
