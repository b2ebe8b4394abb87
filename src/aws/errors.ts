// AWS's error answers. Each protocol has its own shape, and SDKs read the code from it to pick the
// exception class they throw, so the names are AWS's exactly:
// - JSON 1.0: body `{"__type": "<namespace>#<Code>", "message": …}` and the header
//   `x-amzn-query-error: <Code>;Sender`, which current SQS SDKs read first (it carries the legacy
//   Query code, the one their error classes are named after);
// - Query: `<ErrorResponse><Error><Type>Sender</Type><Code>…</Code><Message>…</Message></Error><RequestId>…`.
import { escapeXml } from './xml.js'

export type AwsErrorStatus = 400 | 403 | 404 | 409 | 413 | 429 | 500 | 503

export class AwsError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: AwsErrorStatus = 400,
    /** The JSON protocol's `__type` name where it differs from the Query code (SQS renamed a few). */
    readonly jsonType?: string,
  ) {
    super(message)
    this.name = 'AwsError'
  }

  get fault(): 'Sender' | 'Receiver' {
    return this.status >= 500 ? 'Receiver' : 'Sender'
  }
}

export const invalidAction = (action: string) => new AwsError('InvalidAction', `The action ${action} is not valid for this endpoint.`)
export const malformed = (message: string) => new AwsError('MalformedQueryString', message)
export const missingParameter = (name: string) => new AwsError('MissingParameter', `The request must contain the parameter ${name}.`)
export const invalidParameter = (message: string) => new AwsError('InvalidParameterValue', message)

export function renderJsonError(error: AwsError, namespace: string, requestId: string): Response {
  const type = error.jsonType ?? error.code
  return new Response(JSON.stringify({ __type: `${namespace}#${type}`, message: error.message }), {
    status: error.status,
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amzn-query-error': `${error.code};${error.fault}`,
      'x-amzn-requestid': requestId,
    },
  })
}

export function renderQueryError(error: AwsError, requestId: string): Response {
  const xml =
    `<?xml version="1.0" encoding="UTF-8"?>\n<ErrorResponse><Error><Type>${error.fault}</Type><Code>${escapeXml(error.code)}</Code>` +
    `<Message>${escapeXml(error.message)}</Message><Detail/></Error><RequestId>${escapeXml(requestId)}</RequestId></ErrorResponse>`
  return new Response(xml, { status: error.status, headers: { 'content-type': 'text/xml', 'x-amzn-requestid': requestId } })
}
