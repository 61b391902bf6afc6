import { invalid, SqsError } from './sqs-error';

/**
 * The AWS query protocol of the SQS door (the one botocore 1.29 and older SDKs speak): a
 * form-encoded `Action=<Action>&Version=2012-11-05&...` body in, AWS's XML out. It only translates:
 * a request becomes the same parameters the AWS JSON 1.0 body carries, and an action's JSON answer is
 * written as the XML SQS answers, so both protocols run one operation layer (sqs.ts).
 */
export const QUERY_MEDIA_TYPE = 'application/x-www-form-urlencoded';
export const XML_MEDIA_TYPE = 'text/xml';
export const SQS_API_VERSION = '2012-11-05';
const XMLNS = `http://queue.amazonaws.com/doc/${SQS_API_VERSION}/`;

/** Query requests are chosen by Content-Type, as AWS chooses (the JSON protocol names its own media type). */
export function isQueryRequest(contentType: string | undefined): boolean {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase() === QUERY_MEDIA_TYPE;
}

/** Flattened lists of strings: `AttributeName.1=All` is `AttributeNames: ['All']`. */
const STRING_LISTS: Record<string, string> = {
  AttributeName: 'AttributeNames',
  MessageSystemAttributeName: 'MessageSystemAttributeNames',
  MessageAttributeName: 'MessageAttributeNames',
};
/** Flattened lists of structures: `DeleteMessageBatchRequestEntry.1.Id=a` is `Entries: [{ Id: 'a' }]`. */
const ENTRY_LISTS = new Set(['DeleteMessageBatchRequestEntry', 'ChangeMessageVisibilityBatchRequestEntry']);
/**
 * An empty list is the list's own name with no value (`Entries=`, `AttributeNames=`): botocore's
 * query serializer sends it so, and SQS reads it as the empty list (an empty batch is EmptyBatchRequest).
 */
const EMPTY_LIST_NAMES = new Set([...Object.values(STRING_LISTS), 'Entries']);
/** Parameters JSON carries as numbers; a value that is not an integer stays text, for the operation to refuse. */
const INTEGERS = new Set(['MaxNumberOfMessages', 'WaitTimeSeconds', 'VisibilityTimeout']);
const INDEX = /^[1-9][0-9]{0,3}$/;

export interface QueryRequest {
  action: string;
  params: Record<string, unknown>;
  /** Names of structures the door's actions do not take (Attribute.1.Name, Tag.1.Key, ...): refused once the action is known to be served. */
  unknown: string[];
}

/** The action and its parameters in the AWS JSON 1.0 shape. A name given twice is refused, as a JSON member twice is. */
export function parseQueryRequest(body: Buffer): QueryRequest {
  const form = new URLSearchParams(body.toString('utf8'));
  const params: Record<string, unknown> = {};
  const lists = new Map<string, Map<number, string>>();
  const entries = new Map<number, Record<string, unknown>>();
  const seen = new Set<string>();
  const unknown: string[] = [];
  let action: string | undefined;
  for (const [key, value] of form) {
    if (seen.has(key)) throw invalid(`The parameter ${key} appears twice`);
    seen.add(key);
    if (key === 'Action') {
      action = value;
      continue;
    }
    if (key === 'Version') {
      if (value !== SQS_API_VERSION) throw new SqsError(400, 'NoSuchVersion', `The door serves Version ${SQS_API_VERSION}`);
      continue;
    }
    const [head, index, member, ...rest] = key.split('.');
    if (index === undefined) {
      params[key] = EMPTY_LIST_NAMES.has(key) && value === '' ? [] : scalar(key, value);
    } else if (head! in STRING_LISTS && member === undefined) {
      const list = lists.get(head!) ?? new Map<number, string>();
      list.set(position(key, index), value);
      lists.set(head!, list);
    } else if (ENTRY_LISTS.has(head!) && member !== undefined && rest.length === 0) {
      const n = position(key, index);
      const entry = entries.get(n) ?? {};
      entry[member] = scalar(member, value);
      entries.set(n, entry);
    } else {
      unknown.push(key);
    }
  }
  if (action === undefined || action === '') throw new SqsError(400, 'MissingAction', 'The request must contain the parameter Action');
  for (const [head, list] of lists) params[STRING_LISTS[head]!] = inOrder(list);
  if (entries.size > 0) params.Entries = inOrder(entries);
  return { action, params, unknown };
}

function position(key: string, index: string): number {
  if (!INDEX.test(index)) throw invalid(`${key}: a list index is 1 or more`);
  return Number(index);
}

const inOrder = <T>(list: Map<number, T>): T[] => [...list].sort(([a], [b]) => a - b).map(([, v]) => v);

const scalar = (name: string, value: string): unknown => (INTEGERS.has(name) && /^-?[0-9]{1,15}$/.test(value) ? Number(value) : value);

/** Element names of the JSON answers' lists and maps, as SQS flattens them in XML. */
const MAP_ELEMENTS: Record<string, string> = { Attributes: 'Attribute', MessageAttributes: 'MessageAttribute' };
const LIST_ELEMENTS: Record<string, (action: string) => string> = {
  Messages: () => 'Message',
  Successful: (action) => `${action}ResultEntry`,
  Failed: () => 'BatchResultErrorEntry',
};
/** Actions whose answer has no result element (SQS answers only their metadata). */
const NO_RESULT = new Set(['DeleteMessage', 'ChangeMessageVisibility', 'PurgeQueue']);

/** An action's JSON answer as SQS's XML: `<ActionResponse><ActionResult>…</ActionResult><ResponseMetadata>…`. */
export function queryAnswer(action: string, answer: Record<string, unknown>, requestId: string): string {
  const result = NO_RESULT.has(action) ? '' : `<${action}Result>${members(action, answer)}</${action}Result>`;
  return `<?xml version="1.0"?><${action}Response xmlns="${XMLNS}">${result}${metadata(requestId)}</${action}Response>`;
}

/**
 * AWS's query error: Type Sender for the caller's faults, Receiver for the door's; the code as the
 * query protocol spells it (the AWS.SimpleQueueService.* codes botocore maps to its exceptions).
 */
export function queryError(status: number, code: string, message: string, requestId: string): string {
  return (
    `<?xml version="1.0"?><ErrorResponse xmlns="${XMLNS}"><Error><Type>${faultOf(status)}</Type><Code>${text(queryCode(code))}</Code>` +
    `<Message>${text(message)}</Message><Detail/></Error><RequestId>${text(requestId)}</RequestId></ErrorResponse>`
  );
}

/** The codes whose query-protocol spelling differs from AWS JSON's (SQS's service model, awsQueryError). */
const QUERY_CODES: Record<string, string> = {
  QueueDoesNotExist: 'AWS.SimpleQueueService.NonExistentQueue',
  MessageNotInflight: 'AWS.SimpleQueueService.MessageNotInflight',
  EmptyBatchRequest: 'AWS.SimpleQueueService.EmptyBatchRequest',
  TooManyEntriesInBatchRequest: 'AWS.SimpleQueueService.TooManyEntriesInBatchRequest',
  BatchEntryIdsNotDistinct: 'AWS.SimpleQueueService.BatchEntryIdsNotDistinct',
  InvalidBatchEntryId: 'AWS.SimpleQueueService.InvalidBatchEntryId',
  UnsupportedOperation: 'AWS.SimpleQueueService.UnsupportedOperation',
  PurgeQueueInProgress: 'AWS.SimpleQueueService.PurgeQueueInProgress',
};
export const queryCode = (code: string): string => QUERY_CODES[code] ?? code;
const faultOf = (status: number) => (status >= 500 ? 'Receiver' : 'Sender');

/**
 * An AWS JSON refusal's `x-amzn-query-error` header, `<query code>;<Sender|Receiver>`, as SQS sends it
 * (its awsQueryCompatible trait): the SDKs on AWS JSON read the query code from it, so code written
 * against the query protocol's codes (aws-sdk-go-v2's ErrorCode(), the AWS CLI's message) sees them still.
 */
export const queryErrorHeader = (status: number, code: string): string => `${queryCode(code)};${faultOf(status)}`;

const metadata = (requestId: string) => `<ResponseMetadata><RequestId>${text(requestId)}</RequestId></ResponseMetadata>`;

function members(action: string, value: Record<string, unknown>): string {
  return Object.entries(value)
    .map(([name, v]) => {
      if (Array.isArray(v)) {
        const element = LIST_ELEMENTS[name]?.(action) ?? name;
        return v.map((item) => element1(element, item, action)).join('');
      }
      const mapElement = MAP_ELEMENTS[name];
      if (mapElement && isRecord(v)) {
        return Object.entries(v)
          .map(([key, item]) => `<${mapElement}><Name>${text(key)}</Name>${element1('Value', item, action)}</${mapElement}>`)
          .join('');
      }
      return element1(name, v, action);
    })
    .join('');
}

function element1(name: string, value: unknown, action: string): string {
  if (value === undefined) return '';
  if (isRecord(value)) return `<${name}>${members(action, value)}</${name}>`;
  return `<${name}>${text(String(value))}</${name}>`;
}

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * Text content, escaped. A carriage return is written as a character reference: an XML parser turns a
 * literal one into a line feed, and the body's MD5 (which clients check) would no longer match. A
 * character XML 1.0 cannot hold at all, which only an error's quote of the caller's input carries here
 * (a body with one comes base64, sqs.ts), becomes U+FFFD, so the answer stays a document clients parse.
 */
function text(value: string): string {
  return value.replace(/[&<>\r]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&#xD;')).replace(NOT_XML_CHARACTERS, '\uFFFD');
}

/** Characters outside XML 1.0's (and so outside what an SQS body may hold; decoded text has no lone surrogates). */
// eslint-disable-next-line no-control-regex
const NOT_XML_CHARACTERS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;
export const isXmlText = (value: string): boolean => value.search(NOT_XML_CHARACTERS) < 0;
