import { describe, expect, it } from 'vitest'
import { checkMessageAttributes, InvalidMessageAttribute, messageAttributesSize } from '../../src/sns/message-attributes.js'
import {
  InvalidMessageStructure,
  notificationDocument,
  type PublishedMessage,
  queueDelivery,
  resolveMessageStructure,
} from '../../src/sns/notification.js'

const message: PublishedMessage = {
  messageId: '0190a3c4-0000-7000-8000-000000000001',
  topicArn: 'arn:aws:sns:us-east-1:000000000000:orders',
  subject: 'hello',
  message: '{"order": 1}',
  attributes: {
    kind: { DataType: 'String', StringValue: 'created' },
    total: { DataType: 'Number', StringValue: '12.5' },
    blob: { DataType: 'Binary', BinaryValue: 'AAEC' },
  },
  timestamp: new Date('2026-12-07T00:00:01.234Z'),
}

describe('the notification an SQS subscriber receives', () => {
  it('is AWS JSON document with {Type, Value} attributes and no signature fields', () => {
    const doc = JSON.parse(notificationDocument(message))
    expect(doc).toEqual({
      Type: 'Notification',
      MessageId: message.messageId,
      TopicArn: message.topicArn,
      Subject: 'hello',
      Message: '{"order": 1}',
      Timestamp: '2026-12-07T00:00:01.234Z',
      SignatureVersion: '1',
      MessageAttributes: {
        kind: { Type: 'String', Value: 'created' },
        total: { Type: 'Number', Value: '12.5' },
        blob: { Type: 'Binary', Value: 'AAEC' },
      },
    })
    for (const absent of ['Signature', 'SigningCertURL', 'UnsubscribeURL']) expect(doc).not.toHaveProperty(absent)
  })

  it('leaves out Subject and MessageAttributes when the publish had none', () => {
    const doc = JSON.parse(notificationDocument({ ...message, subject: undefined, attributes: {} }))
    expect(doc).not.toHaveProperty('Subject')
    expect(doc).not.toHaveProperty('MessageAttributes')
  })

  it('wraps by default and carries no SQS attributes; raw delivery is the message and its attributes', () => {
    const wrapped = queueDelivery(message, false)
    expect(JSON.parse(wrapped.body).Message).toBe(message.message)
    expect(wrapped.attributes).toEqual({})
    const raw = queueDelivery(message, true)
    expect(raw.body).toBe(message.message)
    expect(raw.attributes).toEqual(message.attributes)
  })
})

describe('MessageStructure=json', () => {
  it('takes the sqs entry, else the default', () => {
    expect(resolveMessageStructure('plain', undefined)).toBe('plain')
    expect(resolveMessageStructure('{"default":"d","sqs":"q"}', 'json')).toBe('q')
    expect(resolveMessageStructure('{"default":"d","email":"e"}', 'json')).toBe('d')
  })

  it('refuses a body without default, an unparsable body and another structure', () => {
    expect(() => resolveMessageStructure('{"sqs":"q"}', 'json')).toThrow(/No default entry/)
    expect(() => resolveMessageStructure('nope', 'json')).toThrow(InvalidMessageStructure)
    expect(() => resolveMessageStructure('{}', 'xml')).toThrow(InvalidMessageStructure)
  })
})

describe('publish message attributes', () => {
  const ok = (name: string, DataType: string, value: { StringValue?: string; BinaryValue?: string }) =>
    expect(() => checkMessageAttributes({ [name]: { DataType, ...value } })).not.toThrow()
  const bad = (name: string, DataType: string, value: { StringValue?: string; BinaryValue?: string }) =>
    expect(() => checkMessageAttributes({ [name]: { DataType, ...value } })).toThrow(InvalidMessageAttribute)

  it('accepts AWS types, custom labels and String.Array', () => {
    ok('a', 'String', { StringValue: 'x' })
    ok('a.b-c_d', 'String.custom', { StringValue: '' })
    ok('n', 'Number', { StringValue: '-1.5e3' })
    ok('bin', 'Binary', { BinaryValue: 'AAE=' })
    ok('arr', 'String.Array', { StringValue: '["a", 1, true, null]' })
  })

  it('refuses bad names, unknown types, missing values, non-numbers and bad arrays', () => {
    bad('AWS.x', 'String', { StringValue: 'x' })
    bad('.x', 'String', { StringValue: 'x' })
    bad('a..b', 'String', { StringValue: 'x' })
    bad('a b', 'String', { StringValue: 'x' })
    bad('a', 'Text', { StringValue: 'x' })
    bad('a', 'String.', { StringValue: 'x' })
    bad('a', 'String', {})
    bad('a', 'Binary', { StringValue: 'x' })
    bad('a', 'Number', { StringValue: 'twelve' })
    bad('a', 'String.Array', { StringValue: '{"a":1}' })
    bad('a', 'String.Array', { StringValue: '[{"a":1}]' })
  })

  it('counts name, type and value bytes toward the message size', () => {
    expect(messageAttributesSize({ ab: { DataType: 'String', StringValue: 'é' } })).toBe(2 + 6 + 2)
    expect(messageAttributesSize({ b: { DataType: 'Binary', BinaryValue: 'AAEC' } })).toBe(1 + 6 + 3)
  })
})
