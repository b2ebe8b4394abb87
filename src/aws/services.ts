// The AWS services this broker answers on its one AWS endpoint (src/aws/mount.ts).
import { sqsService } from '../sqs/service.js'
import type { AwsService } from './endpoint.js'
import type { AwsContext } from './mount.js'

export function awsServices(): AwsService<AwsContext>[] {
  return [sqsService]
}
