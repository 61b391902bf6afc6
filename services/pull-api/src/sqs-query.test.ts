import { isQueryRequest, isXmlText, parseQueryRequest, queryAnswer, queryError, queryErrorHeader } from './sqs-query';

const form = (text: string) => Buffer.from(text, 'utf8');

describe('the SQS query protocol codec', () => {
  it('is chosen by the form media type only', () => {
    expect(isQueryRequest('application/x-www-form-urlencoded; charset=utf-8')).toBe(true);
    expect(isQueryRequest('application/x-amz-json-1.0')).toBe(false);
    expect(isQueryRequest(undefined)).toBe(false);
  });

  it('reads flattened lists and batch entries into the AWS JSON parameters, in index order', () => {
    expect(
      parseQueryRequest(
        form(
          'Action=ReceiveMessage&Version=2012-11-05&QueueUrl=http%3A%2F%2Fh%2Fv1%2Fsqs%2Fq&AttributeName.2=SentTimestamp&AttributeName.1=All&MaxNumberOfMessages=10',
        ),
      ),
    ).toEqual({
      action: 'ReceiveMessage',
      params: { QueueUrl: 'http://h/v1/sqs/q', AttributeNames: ['All', 'SentTimestamp'], MaxNumberOfMessages: 10 },
      unknown: [],
    });
    expect(
      parseQueryRequest(
        form(
          'Action=ChangeMessageVisibilityBatch&ChangeMessageVisibilityBatchRequestEntry.1.Id=a&ChangeMessageVisibilityBatchRequestEntry.1.ReceiptHandle=h%2B1' +
            '&ChangeMessageVisibilityBatchRequestEntry.1.VisibilityTimeout=0&ChangeMessageVisibilityBatchRequestEntry.2.Id=b&ChangeMessageVisibilityBatchRequestEntry.2.VisibilityTimeout=x',
        ),
      ).params,
    ).toEqual({
      Entries: [
        { Id: 'a', ReceiptHandle: 'h+1', VisibilityTimeout: 0 },
        { Id: 'b', VisibilityTimeout: 'x' },
      ],
    });
  });

  it("reads a list's bare name with no value as the empty list, as botocore's query serializer sends one", () => {
    expect(parseQueryRequest(form('Action=DeleteMessageBatch&QueueUrl=u&Entries=')).params).toEqual({ QueueUrl: 'u', Entries: [] });
    expect(parseQueryRequest(form('Action=ReceiveMessage&AttributeNames=&MessageAttributeNames=&MessageSystemAttributeNames=')).params).toEqual({
      AttributeNames: [],
      MessageAttributeNames: [],
      MessageSystemAttributeNames: [],
    });
    // A value there is no list: the operation refuses it.
    expect(parseQueryRequest(form('Action=ReceiveMessage&AttributeNames=All')).params).toEqual({ AttributeNames: 'All' });
  });

  it('refuses a name twice, a bad index, another version and no action; names the structures no served action takes', () => {
    expect(() => parseQueryRequest(form('Action=GetQueueUrl&QueueName=a&QueueName=b'))).toThrow(expect.objectContaining({ code: 'InvalidParameterValue' }));
    expect(parseQueryRequest(form('Action=GetQueueUrl&Tag.1.Key=a')).unknown).toEqual(['Tag.1.Key']);
    expect(() => parseQueryRequest(form('Action=GetQueueAttributes&AttributeName.0=All'))).toThrow(expect.objectContaining({ code: 'InvalidParameterValue' }));
    expect(() => parseQueryRequest(form('Action=GetQueueUrl&Version=2008-01-01'))).toThrow(expect.objectContaining({ code: 'NoSuchVersion' }));
    expect(() => parseQueryRequest(form('QueueName=a'))).toThrow(expect.objectContaining({ code: 'MissingAction' }));
  });

  it("writes an answer as SQS's XML: flattened messages, attributes and batch entries; a carriage return kept", () => {
    expect(
      queryAnswer(
        'ReceiveMessage',
        { Messages: [{ MessageId: 'm', ReceiptHandle: 'r', MD5OfBody: 'x', Body: '{"a":"<&>"}\r\n', Attributes: { SentTimestamp: '1' } }] },
        'req',
      ),
    ).toBe(
      '<?xml version="1.0"?><ReceiveMessageResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/"><ReceiveMessageResult>' +
        '<Message><MessageId>m</MessageId><ReceiptHandle>r</ReceiptHandle><MD5OfBody>x</MD5OfBody><Body>{"a":"&lt;&amp;&gt;"}&#xD;\n</Body>' +
        '<Attribute><Name>SentTimestamp</Name><Value>1</Value></Attribute></Message>' +
        '</ReceiveMessageResult><ResponseMetadata><RequestId>req</RequestId></ResponseMetadata></ReceiveMessageResponse>',
    );
    expect(
      queryAnswer(
        'DeleteMessageBatch',
        { Successful: [{ Id: 'a' }], Failed: [{ Id: 'b', SenderFault: true, Code: 'ReceiptHandleIsInvalid', Message: 'no' }] },
        'q',
      ),
    ).toContain(
      '<DeleteMessageBatchResult><DeleteMessageBatchResultEntry><Id>a</Id></DeleteMessageBatchResultEntry>' +
        '<BatchResultErrorEntry><Id>b</Id><SenderFault>true</SenderFault><Code>ReceiptHandleIsInvalid</Code><Message>no</Message></BatchResultErrorEntry></DeleteMessageBatchResult>',
    );
    expect(queryAnswer('DeleteMessage', {}, 'q')).not.toContain('DeleteMessageResult');
  });

  it("writes an error with the query protocol's code and the sender or receiver at fault", () => {
    expect(queryError(400, 'QueueDoesNotExist', 'gone', 'r')).toContain(
      '<Error><Type>Sender</Type><Code>AWS.SimpleQueueService.NonExistentQueue</Code><Message>gone</Message><Detail/></Error><RequestId>r</RequestId>',
    );
    expect(queryError(503, 'ServiceUnavailable', 'later', 'r')).toContain('<Type>Receiver</Type><Code>ServiceUnavailable</Code>');
  });

  it('writes a quoted character XML 1.0 cannot hold as U+FFFD, so the error stays a document clients parse', () => {
    const xml = queryError(400, 'InvalidAttributeName', 'Unknown Attribute A\u0001B\u000bC\u001f\ufffe\uffff\tD\r\nE', 'r');
    expect(xml).toContain('<Message>Unknown Attribute A\ufffdB\ufffdC\ufffd\ufffd\ufffd\tD&#xD;\nE</Message>');
    expect(isXmlText('a\tb\r\n\u2028\ud83d\ude00')).toBe(true);
    expect(isXmlText('a\u0000')).toBe(false);
    expect(isXmlText('a\uffff')).toBe(false);
  });

  it('names the query code and the party at fault for an AWS JSON refusal, as SQS does in x-amzn-query-error', () => {
    expect(queryErrorHeader(400, 'QueueDoesNotExist')).toBe('AWS.SimpleQueueService.NonExistentQueue;Sender');
    expect(queryErrorHeader(400, 'ReceiptHandleIsInvalid')).toBe('ReceiptHandleIsInvalid;Sender');
    expect(queryErrorHeader(503, 'ServiceUnavailable')).toBe('ServiceUnavailable;Receiver');
  });
});
