import { describe, expect, it } from 'vitest'
import { decodeQuery, QueryDecodeError } from '../../src/aws/query-decode.js'
import type { Shapes } from '../../src/aws/shapes.js'

// SQS-like (flattened) and SNS-like (member/entry) layouts side by side.
const messageAttributes = { kind: 'map', query: 'MessageAttribute', flat: true, key: 'Name', value: 'Value' } as const
const shapes: Shapes = {
  Attributes: { kind: 'map', query: 'Attribute', flat: true, key: 'Name', value: 'Value' },
  AttributeNames: { kind: 'list', query: 'AttributeName', flat: true },
  MessageAttributes: messageAttributes,
  Entries: { kind: 'list', query: 'SendMessageBatchRequestEntry', flat: true, items: { MessageAttributes: messageAttributes } },
  TopicAttributes: { kind: 'map', query: 'Attributes', flat: false, key: 'key', value: 'value' },
  Tags: { kind: 'list', query: 'Tags', flat: false },
}

const decode = (form: string) => decodeQuery(new URLSearchParams(form), shapes)

describe('Query form decoding into the JSON shape', () => {
  it('drops Action and Version, keeps scalars as strings', () => {
    expect(decode('Action=ReceiveMessage&Version=2012-11-05&QueueUrl=http%3A%2F%2Fh%2F1%2Fq&MaxNumberOfMessages=10')).toEqual({
      QueueUrl: 'http://h/1/q',
      MaxNumberOfMessages: '10',
    })
  })

  it('turns flattened Attribute.N.Name/Value into a map and AttributeName.N into an ordered list', () => {
    expect(decode('Attribute.2.Name=DelaySeconds&Attribute.2.Value=5&Attribute.1.Name=FifoQueue&Attribute.1.Value=true&AttributeName.2=B&AttributeName.1=A&AttributeName.10=C')).toEqual({
      Attributes: { FifoQueue: 'true', DelaySeconds: '5' },
      AttributeNames: ['A', 'B', 'C'],
    })
  })

  it('decodes message attribute values as structures, inside batch entries too', () => {
    const form =
      'MessageAttribute.1.Name=colour&MessageAttribute.1.Value.DataType=String&MessageAttribute.1.Value.StringValue=red' +
      '&SendMessageBatchRequestEntry.1.Id=a&SendMessageBatchRequestEntry.1.MessageBody=hi' +
      '&SendMessageBatchRequestEntry.1.MessageAttribute.1.Name=n&SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.DataType=Number' +
      '&SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.StringValue=7&SendMessageBatchRequestEntry.2.Id=b&SendMessageBatchRequestEntry.2.MessageBody=yo'
    expect(decode(form)).toEqual({
      MessageAttributes: { colour: { DataType: 'String', StringValue: 'red' } },
      Entries: [
        { Id: 'a', MessageBody: 'hi', MessageAttributes: { n: { DataType: 'Number', StringValue: '7' } } },
        { Id: 'b', MessageBody: 'yo' },
      ],
    })
  })

  it('decodes SNS-style member lists and entry maps', () => {
    expect(decode('Attributes.entry.1.key=DisplayName&Attributes.entry.1.value=Hi&Tags.member.1.Key=env&Tags.member.1.Value=prod')).toEqual({
      TopicAttributes: { DisplayName: 'Hi' },
      Tags: [{ Key: 'env', Value: 'prod' }],
    })
  })

  it('refuses contradictory or badly numbered parameters', () => {
    expect(() => decode('Attribute=1&Attribute.1.Name=x')).toThrow(QueryDecodeError)
    expect(() => decode('AttributeName.0=x')).toThrow(QueryDecodeError)
    expect(() => decode('AttributeName.x=y')).toThrow(QueryDecodeError)
    expect(() => decode('Attribute.1.Value=x')).toThrow(QueryDecodeError)
  })
})
