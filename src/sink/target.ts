// The Node sink's --to: a directory path, or s3://bucket/prefix with the endpoint and credentials
// from S3_ENDPOINT, S3_REGION, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY (the AWS_* names as
// fallbacks). Credentials only ever come from the environment, never from the command line.
import { resolve } from 'node:path'
import { directoryStore } from './store-directory.js'
import { s3Store } from './store-s3.js'
import type { ObjectStore } from './store.js'

export interface Target {
  store: ObjectStore
  /** The key prefix inside the target (the s3:// URL's path; '' for a directory). */
  prefix: string
}

export function openTarget(to: string, env: Record<string, string | undefined>): Target {
  const s3 = /^s3:\/\/([^/]+)\/?(.*)$/.exec(to)
  if (!s3) return { store: directoryStore(resolve(to)), prefix: '' }
  const endpoint = env.S3_ENDPOINT ?? env.AWS_ENDPOINT_URL
  const accessKeyId = env.S3_ACCESS_KEY_ID ?? env.AWS_ACCESS_KEY_ID
  const secretAccessKey = env.S3_SECRET_ACCESS_KEY ?? env.AWS_SECRET_ACCESS_KEY
  const region = env.S3_REGION ?? env.AWS_REGION ?? 'auto'
  for (const [name, value] of [['S3_ENDPOINT', endpoint], ['S3_ACCESS_KEY_ID', accessKeyId], ['S3_SECRET_ACCESS_KEY', secretAccessKey]] as const) {
    if (!value) throw new Error(`${name} is required for an s3:// target`)
  }
  return { store: s3Store({ endpoint: endpoint!, bucket: s3[1]!, region, accessKeyId: accessKeyId!, secretAccessKey: secretAccessKey! }), prefix: s3[2] ?? '' }
}
