import { describe, expect, it } from 'vitest'
import type { Shapes } from '../../src/aws/shapes.js'
import { escapeXml, queryResponse, writeMembers } from '../../src/aws/xml.js'

describe('Query answers as XML', () => {
  it('escapes markup, quotes and carriage returns', () => {
    expect(escapeXml(`<a b="c">&'\r`)).toBe('&lt;a b=&quot;c&quot;&gt;&amp;&apos;&#xD;')
  })

  it('writes flattened lists and maps the SQS way', () => {
    const shapes: Shapes = {
      Messages: {
        kind: 'list',
        query: 'Message',
        flat: true,
        items: {
          Attributes: { kind: 'map', query: 'Attribute', flat: true, key: 'Name', value: 'Value' },
          MessageAttributes: { kind: 'map', query: 'MessageAttribute', flat: true, key: 'Name', value: 'Value' },
        },
      },
    }
    const xml = writeMembers(
      { Messages: [{ MessageId: 'm1', Body: 'a<b', Attributes: { SenderId: 's' }, MessageAttributes: { c: { StringValue: 'red', DataType: 'String' } } }] },
      shapes,
    )
    expect(xml).toBe(
      '<Message><MessageId>m1</MessageId><Body>a&lt;b</Body><Attribute><Name>SenderId</Name><Value>s</Value></Attribute>' +
        '<MessageAttribute><Name>c</Name><Value><StringValue>red</StringValue><DataType>String</DataType></Value></MessageAttribute></Message>',
    )
  })

  it('writes member lists and entry maps the SNS way, and skips absent members', () => {
    const shapes: Shapes = {
      Topics: { kind: 'list', query: 'Topics', flat: false },
      Attributes: { kind: 'map', query: 'Attributes', flat: false, key: 'key', value: 'value' },
    }
    expect(writeMembers({ Topics: [{ TopicArn: 'arn:1' }], Attributes: { Owner: '1' }, NextToken: undefined }, shapes)).toBe(
      '<Topics><member><TopicArn>arn:1</TopicArn></member></Topics><Attributes><entry><key>Owner</key><value>1</value></entry></Attributes>',
    )
  })

  it('wraps a result in the action response with its request id', () => {
    const xml = queryResponse('GetQueueUrl', 'http://queue.amazonaws.com/doc/2012-11-05/', { QueueUrl: 'http://h/1/q' }, {}, 'req-1')
    expect(xml).toContain('<GetQueueUrlResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/"><GetQueueUrlResult><QueueUrl>http://h/1/q</QueueUrl></GetQueueUrlResult>')
    expect(xml).toContain('<ResponseMetadata><RequestId>req-1</RequestId></ResponseMetadata></GetQueueUrlResponse>')
    expect(queryResponse('DeleteQueue', 'ns', null, {}, 'r')).not.toContain('DeleteQueueResult')
  })
})
