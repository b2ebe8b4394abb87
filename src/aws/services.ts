// The AWS services this broker answers on its one AWS endpoint (src/aws/mount.ts).
import { snsService } from '../sns/service.js'
import { snsHostOf } from '../sns/sqs-queues.js'
import { sqsService } from '../sqs/service.js'
import type { AwsService } from './endpoint.js'
import type { AwsContext } from './mount.js'

export function awsServices(): AwsService<AwsContext>[] {
  return [sqsService, snsService(snsHostOf)]
}
