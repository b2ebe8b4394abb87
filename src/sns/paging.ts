// SNS list actions page with an opaque NextToken. Here it is the last key of the page, base64url
// encoded so it reads as opaque; a token that does not decode is AWS's InvalidParameter.
import { snsInvalidParameter } from './errors.js'

export function toToken(lastKey: string): string {
  return btoa(String.fromCharCode(...new TextEncoder().encode(lastKey))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

export function fromToken(token: string | undefined): string | undefined {
  if (token === undefined || token === '') return undefined
  try {
    const binary = atob(token.replace(/-/g, '+').replace(/_/g, '/'))
    return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)))
  } catch {
    throw snsInvalidParameter('Invalid parameter: NextToken')
  }
}
