// SNS's own error names. They are not SQS's under another spelling: a missing topic is `NotFound`
// with HTTP 404 where every SQS "does not exist" is a 400, a bad parameter is `InvalidParameter`
// rather than SQS's `InvalidParameterValue` (its value error is `ParameterValueInvalid`), and a missing tag resource is `ResourceNotFound`. SDKs pick
// the exception class from these strings, so each is AWS's exactly.
import { AwsError } from '../aws/errors.js'

export const snsInvalidParameter = (message: string) => new AwsError('InvalidParameter', message, 400)
export const snsInvalidParameterValue = (message: string) => new AwsError('ParameterValueInvalid', message, 400)
export const topicNotFound = () => new AwsError('NotFound', 'Topic does not exist', 404)
export const subscriptionNotFound = () => new AwsError('NotFound', 'Subscription does not exist', 404)
export const resourceNotFound = () => new AwsError('ResourceNotFound', 'Resource does not exist', 404)
export const tagLimitExceeded = () => new AwsError('TagLimitExceeded', 'Could not complete request: tag quota of per resource exceeded', 400)
export const tagPolicy = (message: string) => new AwsError('TagPolicy', message, 400)
