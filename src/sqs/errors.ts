// SQS's own errors, by the names its SDKs turn into exception classes. Where the JSON protocol
// renamed one, the Query code (also sent in x-amzn-query-error) and the JSON type differ.
import { AwsError } from '../aws/errors.js'

const sqs = (query: string, json: string, message: string) => new AwsError(query, message, 400, json)

export const queueDoesNotExist = () => sqs('AWS.SimpleQueueService.NonExistentQueue', 'QueueDoesNotExist', 'The specified queue does not exist.')
export const queueNameExists = (name: string) => sqs('QueueAlreadyExists', 'QueueNameExists', `A queue already exists with the name ${name} and different attributes.`)
export const queueDeletedRecently = () =>
  sqs('AWS.SimpleQueueService.QueueDeletedRecently', 'QueueDeletedRecently', 'You must wait 60 seconds after deleting a queue before you can create another with the same name.')
export const purgeInProgress = (name: string) =>
  sqs('AWS.SimpleQueueService.PurgeQueueInProgress', 'PurgeQueueInProgress', `Only one PurgeQueue operation on ${name} is allowed every 60 seconds.`)
export const receiptHandleIsInvalid = (handle: string) => sqs('ReceiptHandleIsInvalid', 'ReceiptHandleIsInvalid', `The input receipt handle "${handle.slice(0, 64)}" is not a valid receipt handle.`)
export const messageNotInflight = () => sqs('AWS.SimpleQueueService.MessageNotInflight', 'MessageNotInflight', 'The message referred to is not in flight.')
export const invalidAttributeName = (name: string) => sqs('InvalidAttributeName', 'InvalidAttributeName', `Unknown or unsettable attribute ${name}.`)
export const invalidAttributeValue = (message: string) => sqs('InvalidAttributeValue', 'InvalidAttributeValue', message)
export const invalidMessageContents = (message: string) => sqs('InvalidMessageContents', 'InvalidMessageContents', message)
export const emptyBatch = () => sqs('AWS.SimpleQueueService.EmptyBatchRequest', 'EmptyBatchRequest', 'There should be at least one entry in the request.')
export const tooManyEntries = (n: number) =>
  sqs('AWS.SimpleQueueService.TooManyEntriesInBatchRequest', 'TooManyEntriesInBatchRequest', `Maximum number of entries per request are 10. You have sent ${n}.`)
export const idsNotDistinct = (id: string) => sqs('AWS.SimpleQueueService.BatchEntryIdsNotDistinct', 'BatchEntryIdsNotDistinct', `Id ${id} repeated.`)
export const invalidBatchEntryId = (id: string) =>
  sqs('AWS.SimpleQueueService.InvalidBatchEntryId', 'InvalidBatchEntryId', `A batch entry id can only contain alphanumeric characters, hyphens and underscores, at most 80 (${id.slice(0, 90)}).`)
export const batchTooLong = (bytes: number) => sqs('AWS.SimpleQueueService.BatchRequestTooLong', 'BatchRequestTooLong', `Batch requests cannot be longer than 1048576 bytes (${bytes}).`)
export const unsupported = (message: string) => sqs('AWS.SimpleQueueService.UnsupportedOperation', 'UnsupportedOperation', message)
export const resourceNotFound = (message: string) => sqs('ResourceNotFoundException', 'ResourceNotFoundException', message)
export const invalidParameter = (message: string) => sqs('InvalidParameterValue', 'InvalidParameterValue', message)
export const missing = (name: string) => sqs('MissingParameter', 'MissingParameter', `The request must contain the parameter ${name}.`)
