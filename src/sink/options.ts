// A sink's configuration: which queues, under which name, into which windows. The same options
// come from the Node command line (cli.ts) and from the Worker's SINK_* variables (cron/sink.ts).
import { z } from 'zod'

export const sinkOptions = z.object({
  /** The name queues give as retentionSinkHold; part of the kv pointer s3:<sink>:<queue>:committed. */
  // The same rule configure applies to retentionSinkHold, so every sink name can be a hold's.
  sink: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1 to 64 characters from A-Z a-z 0-9 . _ -'),
  queues: z.array(z.string().min(1)).min(1),
  tenant: z.string().default(''),
  /** Window length: windows are [k*w, (k+1)*w) of createdAt, aligned to the epoch. */
  windowSeconds: z.number().int().min(1).max(86_400).default(60),
  /** An object of one (partition, window) is split into parts of at most this many frames... */
  maxFrames: z.number().int().min(1).max(10_000_000).default(100_000),
  /** ...and at most this many NDJSON bytes (before gzip; a single larger frame gets a part of its own). */
  maxBytes: z.number().int().min(1024).max(1024 * 1024 * 1024).default(64 * 1024 * 1024),
  /** Key prefix inside the target. */
  prefix: z.string().default(''),
  /** How long a claimed lease lives without a renewal; renewed before and at every window. */
  leaseSeconds: z.number().int().min(1).max(3600).default(30),
})

export type SinkOptions = z.output<typeof sinkOptions>
export type SinkOptionsInput = z.input<typeof sinkOptions>
