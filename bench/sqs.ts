// `npm run bench:sqs`: the SQS endpoint beside the native API of the same broker, in the same run,
// in alternating rounds (native, SQS, native, SQS, …) so other load on the machine falls on both:
//   send-batch      native POST /api/v1/push of 10 items  |  SQS SendMessageBatch of 10 entries
//   receive+delete  native pop batch=10 + ack/batch       |  SQS ReceiveMessage(10) + DeleteMessageBatch
// Both over one standard queue of 64 partitions (the native rounds push to the same 64 partitions),
// CLIENTS concurrent loops each. Prints msg/s per round, the medians and the load average.
import { loadavg } from 'node:os'
import { CreateQueueCommand, DeleteMessageBatchCommand, ReceiveMessageCommand, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs'
import { closedLoop, median, round } from './lib.js'
import { popAck } from './queen.js'
import { envInt, log, startBroker, startPostgres } from './stack.js'

const CLIENTS = envInt('BENCH_CONCURRENCY', 8)
const ROUNDS = envInt('BENCH_ROUNDS', 3)
const WINDOW_MS = envInt('BENCH_DURATION_MS', 4000)
const KEY = { accessKeyId: 'AKIDBENCH001', secretAccessKey: 'bench-secret-0123456789abcdef' }
const WIDTH = 64

const postgres = await startPostgres()
const broker = await startBroker(postgres.url, { brokerEnv: { AWS_ACCESS_KEYS: `${KEY.accessKeyId}:${KEY.secretAccessKey}::admin` } })
try {
  const sqs = new SQSClient({ endpoint: `http://127.0.0.1:${broker.port}`, region: 'eu-west-3', credentials: KEY })
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'bench-sqs', Attributes: { 'queen.partitions': String(WIDTH) } as Record<string, string> }))
  const client = broker.client
  let n = 0
  const nativeSend = async () => {
    const base = n++
    const res = await client.request('POST', '/api/v1/push', { items: Array.from({ length: 10 }, (_, i) => ({ queue: 'bench-sqs', partition: String((base * 10 + i) % WIDTH), payload: { sqs: { b: `m${i}`, t: 0, k: 'bench' } } })) })
    if (res.status !== 201) throw new Error(`push answered ${res.status}`)
    return 10
  }
  const sqsSend = async () => {
    const sent = await sqs.send(new SendMessageBatchCommand({ QueueUrl, Entries: Array.from({ length: 10 }, (_, i) => ({ Id: `e${i}`, MessageBody: `m${i}` })) }))
    return sent.Successful?.length ?? 0
  }
  const nativeReceive = async () => {
    const got = await popAck(client, 'bench-sqs', 10, 10)
    return got === 'empty' ? 0 : got
  }
  const sqsReceive = async () => {
    const got = await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10 }))
    const messages = got.Messages ?? []
    if (messages.length > 0) await sqs.send(new DeleteMessageBatchCommand({ QueueUrl, Entries: messages.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle! })) }))
    return messages.length
  }
  const measure = async (step: () => Promise<number>) => {
    const result = await closedLoop({ concurrency: CLIENTS, durationMs: WINDOW_MS, warmupMs: 500, op: async () => { const got = await step(); return got === 0 ? 'empty' : got } })
    if (result.errors > 0) throw new Error(`${result.errors} requests failed`)
    return result.itemsPerSec
  }
  const rows: Record<string, number[]> = { 'native send-batch': [], 'SQS send-batch': [], 'native receive+delete': [], 'SQS receive+delete': [] }
  for (let r = 0; r < ROUNDS; r++) {
    rows['native send-batch']!.push(await measure(nativeSend))
    rows['SQS send-batch']!.push(await measure(sqsSend))
  }
  for (let r = 0; r < ROUNDS; r++) {
    rows['native receive+delete']!.push(await measure(nativeReceive))
    rows['SQS receive+delete']!.push(await measure(sqsReceive))
  }
  log(`load average ${loadavg().map((x) => round(x, 2)).join(' ')}; ${CLIENTS} clients, ${ROUNDS} rounds of ${WINDOW_MS} ms`)
  for (const [name, values] of Object.entries(rows)) log(`${name}: ${values.map((v) => round(v, 0)).join(', ')} msg/s (median ${round(median(values), 0)})`)
} finally {
  await broker.stop()
  await postgres.stop()
}
