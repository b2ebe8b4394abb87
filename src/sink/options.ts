// A sink's configuration: which queues, under which name, into which windows. The same options
// come from the Node command line (cli.ts) and from the Worker's SINK_* variables (cron/sink.ts).
import { z } from 'zod'

export const sinkOptions = z.object({
  /** The name queues give as retentionSinkHold; part of the kv pointer s3:<sink>:<queue>:committed. */
  // The same rule configure applies to retentionSinkHold, so every sink name can be a hold's.
  sink: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1 to 64 characters from A-Z a-z 0-9 . _ -'),
  queues: z.array(z.string().min(1)).min(1),
  tenant: z.string().default(''),
  /** Window length. Under the hive layout windows restart at every `align` boundary, so none straddles it; the legacy layout's are [k*w, (k+1)*w) from the epoch. */
  windowSeconds: z.number().int().min(1).max(86_400).default(60),
  /** Where objects go: `hive` (queue=/dt=/hour= keys a query engine reads as they are) or `legacy` (the first layout, per partition, gzip NDJSON only). */
  layout: z.enum(['hive', 'legacy']).default('hive'),
  /** hive layout only: JSONL lines or Parquet rows, the same five fields (docs/sink.md). */
  format: z.enum(['jsonl', 'parquet']).default('jsonl'),
  /** hive layout: JSONL gzip, zstd or none; Parquet pages are zstd with `zstd`, Snappy otherwise. */
  compression: z.enum(['gzip', 'zstd', 'none']).default('gzip'),
  /** hive layout only: one object series per window for the whole queue, or one per partition. */
  windows: z.enum(['queue', 'partition']).default('queue'),
  /** hive layout only: the boundary no window straddles, and what dt=/hour= are taken from. */
  align: z.enum(['hour', 'day', 'none']).default('hour'),
  /** An object of one window (of a queue, or of a partition) is split into parts of at most this many frames... */
  maxFrames: z.number().int().min(1).max(10_000_000).default(100_000),
  /** ...and at most this many bytes of encoded rows (before compression; a single larger frame gets a part of its own). */
  maxBytes: z.number().int().min(1024).max(1024 * 1024 * 1024).default(64 * 1024 * 1024),
  /** Key prefix inside the target. */
  prefix: z.string().default(''),
  /** How long a claimed lease lives without a renewal; renewed before and at every window. */
  leaseSeconds: z.number().int().min(1).max(3600).default(30),
})

export type SinkOptions = z.output<typeof sinkOptions>
export type SinkOptionsInput = z.input<typeof sinkOptions>
