import { createHash } from 'node:crypto';
import type { Router, NextFunction, Request, RequestHandler, Response } from 'express';
import { ijsonProblemText, parseIJson, type QueueOperations } from '@bus/contracts';
import type { ConsumerTools } from '@bus/db';
import { createRouter, type ErrorPage } from '@bus/http';
import {
  createSigV4Verifier,
  SignatureRefusedError,
  signedRouteSteps,
  unavailableOnFailure,
  type ConnectionCache,
  type PrincipalStore,
  type SigningPrincipal,
} from '@bus/identity';
import { acknowledge, receive, release, settle, type HandleResult, type PullDeps } from './pull';
import { hangUpSignal, PULL_LIMITS } from './pull-routes';
import type { LeasedMessage } from '@bus/queue';
import { invalid, missing, sqsCodeOf, SqsError } from './sqs-error';
import { PURGE_INTERVAL_MS, type PurgeMarks } from './sqs-purge';
import { isQueryRequest, isXmlText, parseQueryRequest, queryAnswer, queryError, queryErrorHeader, XML_MEDIA_TYPE } from './sqs-query';

/**
 * The SQS-compatible door of the pull API (docs/delivery.md, "SQS-compatible reads"; docs/sqs.md): the
 * AWS JSON 1.0 protocol and the AWS query protocol (sqs-query.ts) on one path, chosen by Content-Type,
 * over one set of operations and the same queue operations and receipt handles as the consumer routes. Signed with SigV4 for the service `sqs`, by a verified principal of an active
 * consumer connection; its queue is that connection (QueueName = connection id).
 */
export const SQS_PATH = '/v1/sqs/';
/**
 * Both spellings of the door's endpoint (AWS SDKs differ in whether they add the slash to the one
 * configured: botocore does not), and a queue's own URL, where SQS takes a request too: the AWS SDK
 * for Java v1 posts there, and the query protocol's older SDKs also leave QueueUrl out.
 */
const SQS_PATHS = [SQS_PATH, SQS_PATH.slice(0, -1), `${SQS_PATH}:queue`];
const isDoorPath = (path: string) => /^\/v1\/sqs(\/[^/]*)?$/.test(path);
/** AWS's service name for SQS: the scope every signature of the door names. */
export const SQS_SIGNING_SERVICE = 'sqs';
export const AWS_JSON_MEDIA_TYPE = 'application/x-amz-json-1.0';
const ERROR_NAMESPACE = 'com.amazonaws.sqs#';
const TARGET_PREFIX = 'AmazonSQS.';
/** SQS's own limits of the parameters this door takes. */
const MAX_VISIBILITY_SECONDS = 43_200;
const MAX_WAIT_SECONDS = 20;
const MAX_BATCH_ENTRIES = 10;
const BATCH_ENTRY_ID = /^[A-Za-z0-9_-]{1,80}$/;
/** What GetQueueAttributes answers besides the counts: fixed properties of every bus queue. */
const FIXED_ATTRIBUTES = {
  FifoQueue: 'true',
  ContentBasedDeduplication: 'false',
  VisibilityTimeout: '30',
  ReceiveMessageWaitTimeSeconds: '0',
  DelaySeconds: '0',
} as const;
const COUNTED_ATTRIBUTES = ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'] as const;
/** Of the consumer connection: its queue is made and changed with it (seconds since the epoch, as SQS). */
const DATED_ATTRIBUTES = ['CreatedTimestamp', 'LastModifiedTimestamp'] as const;
const QUEUE_ATTRIBUTES = new Set<string>([...COUNTED_ATTRIBUTES, ...Object.keys(FIXED_ATTRIBUTES), ...DATED_ATTRIBUTES, 'QueueArn']);
/**
 * The account part of a queue's ARN, arn:aws:sqs:<AWS_SIGV4_REGION>:000000000000:<connection id>: a
 * bus queue belongs to no AWS account, and twelve zeros can be no real one (docs/sqs.md).
 */
export const SQS_ACCOUNT_ID = '000000000000';
const MESSAGE_ATTRIBUTES = [
  'MessageGroupId',
  'MessageDeduplicationId',
  'SentTimestamp',
  'ApproximateReceiveCount',
  'SequenceNumber',
  'SenderId',
  'ApproximateFirstReceiveTimestamp',
] as const;

export { SqsError } from './sqs-error';

/**
 * Every error answer on the door's path in the request's protocol, the status kept: the door's own
 * SqsErrors, and the host's and the shared steps' refusals under the nearest SQS code (429
 * RequestThrottled, 503 ServiceUnavailable, ...), so an SDK always reads a code. AWS JSON 1.0
 * `{ "__type", "message" }`; a query-protocol request (form-encoded) gets AWS's XML ErrorResponse as
 * text/xml, as the door's own refusals (sqsRoutes).
 */
export const sqsErrorAnswer: ErrorPage = (req, err, requestId) => {
  if (!isDoorPath(req.path)) return undefined;
  const headers: Record<string, string> = { [REQUEST_ID_HEADER]: requestId };
  if (isQueryRequest(req.header('content-type'))) return { xml: queryError(err.status, sqsCodeOf(err), err.message, requestId), headers };
  const code = sqsCodeOf(err);
  return {
    json: { __type: `${ERROR_NAMESPACE}${code}`, message: err.message },
    headers: { ...headers, 'Content-Type': AWS_JSON_MEDIA_TYPE, 'x-amzn-query-error': queryErrorHeader(err.status, code) },
  };
};

/** Where SQS puts an answer's request id, and botocore and the AWS SDKs read it on AWS JSON (the query protocol's XML carries it too). */
const REQUEST_ID_HEADER = 'x-amzn-RequestId';

export interface SqsRoutesDeps {
  pull: PullDeps;
  /** The consumer's queue counts: delivery's queue stats, the ones the admin API shows. */
  stats: QueueOperations['stats'];
  /** PurgeQueue: the queue operations' purge (libs/queue purgeQueue). */
  purge: QueueOperations['purge'];
  /** PurgeQueue's 60-s rule, kept where every pull-api replica reads it (sqs-purge.ts). */
  purgeMarks: PurgeMarks;
  /** When the consumer connection (its queue) was created and last changed status; null if it is gone. */
  queueDates: (consumerId: string) => Promise<{ createdAt: Date; modifiedAt: Date } | null>;
  principals: Pick<PrincipalStore, 'signingPrincipal'>;
  /** The identity's connection cache: a revoked connection reaches it through the control topic. */
  connections: Pick<ConnectionCache, 'get'>;
  /** All AWS-signed requests together (libs/identity signedRequestLimit), shared with the gateway's signed routes. */
  limit: RequestHandler;
  /** AWS_SIGV4_REGION. */
  region: string;
  /** AWS_SIGV4_MAX_SKEW. */
  maxSkewMs: number;
  /** BUS_BASE_URL: a queue's URL is <base>/v1/sqs/<connection id>. */
  baseUrl: string;
}

/** The consumer connection a verified principal reads for. */
interface SqsCaller {
  consumerId: string;
  tools: ConsumerTools | null;
  /** The queue the request's path names (posted to a queue's URL), if it names one. */
  pathQueue: string | undefined;
}

type Body = Record<string, unknown>;
/** One operation of the door, shared by both protocols: parameters and answer in the AWS JSON 1.0 shape. */
type Action = (caller: SqsCaller, body: Body, res: Response) => Promise<Body>;

/**
 * POST /v1/sqs/ with X-Amz-Target: AmazonSQS.<Action> (or a form with Action=<Action>): the signature (none is 401
 * MissingAuthenticationToken, a bad one 403 SignatureDoesNotMatch), the shared signed-request limit before the body is read, the body (at most
 * 64 KB), the principal (verified, of an active consumer connection, else 403 AccessDenied), then the action.
 */
export function sqsRoutes(deps: SqsRoutesDeps): Router {
  const verifier = createSigV4Verifier<SigningPrincipal>({
    region: deps.region,
    service: SQS_SIGNING_SERVICE,
    maxSkewMs: deps.maxSkewMs,
    resolve: (accessKeyId) => deps.principals.signingPrincipal(accessKeyId),
  });
  const authorize = async (principal: SigningPrincipal, req: Request, res: Response) => {
    if (principal.status !== 'verified') {
      throw new SqsError(
        403,
        'AccessDenied',
        'The AWS principal is not verified yet: sign POST /v1/tenants/{t}/principals/verify with the challenge the operator issued',
      );
    }
    const connection = await unavailableOnFailure(() => deps.connections.get(principal.connectionId));
    if (!connection || connection.status !== 'active' || connection.kind !== 'consumer') {
      throw new SqsError(403, 'AccessDenied', 'Only a verified principal of an active consumer connection may read a queue');
    }
    res.locals.sqsCaller = {
      consumerId: connection.id,
      tools: connection.consumerTools,
      pathQueue: typeof req.params.queue === 'string' ? req.params.queue : undefined,
    } satisfies SqsCaller;
  };
  const actions = sqsActions(deps);

  const router = createRouter();
  router.use(SQS_PATHS, (_req: Request, res: Response, next: NextFunction) => {
    res.setHeader(REQUEST_ID_HEADER, String(res.locals.requestId));
    next();
  });
  router.post(
    SQS_PATHS,
    ...signedRouteSteps({ verifier, authorize, limit: deps.limit, maxBodyBytes: PULL_LIMITS.bodyBytes }),
    async (req: Request, res: Response) => {
      const caller = res.locals.sqsCaller as SqsCaller;
      const body = res.locals.body as Buffer;
      if (isQueryRequest(req.header('content-type'))) {
        const { action: name, params, unknown } = parseQueryRequest(body);
        const action = operation(name);
        if (unknown.length > 0) throw invalid(`Unknown parameter ${unknown[0]}`);
        const answer = await action(caller, params, res);
        res.type(XML_MEDIA_TYPE).send(queryAnswer(name, answer, String(res.locals.requestId)));
        return;
      }
      const target = req.header('x-amz-target') ?? '';
      const answer = await operation(target.startsWith(TARGET_PREFIX) ? target.slice(TARGET_PREFIX.length) : undefined)(caller, bodyOf(body), res);
      res.set('Content-Type', AWS_JSON_MEDIA_TYPE).json(answer);
    },
  );
  const operation = (name: string | undefined): Action => {
    const action = name === undefined ? undefined : actions.get(name);
    if (!action)
      throw new SqsError(
        400,
        'InvalidAction',
        `The action must be one of: ${[...actions.keys()].join(', ')} (X-Amz-Target AmazonSQS.<Action>, or Action=<Action> in the query protocol)`,
      );
    return action;
  };
  // A refused signature is SQS's 403 SignatureDoesNotMatch, its reason the message; no signature at
  // all stays 401 (HTTP's "no credentials"), with SQS's code for it.
  router.use(SQS_PATHS, (err: unknown, _req: Request, _res: Response, next: NextFunction) => {
    if (!(err instanceof SignatureRefusedError)) return next(err);
    next(
      err.refusal.reason === 'missing' ? new SqsError(401, 'MissingAuthenticationToken', err.message) : new SqsError(403, 'SignatureDoesNotMatch', err.message),
    );
  });
  return router;
}

function sqsActions(deps: SqsRoutesDeps): Map<string, Action> {
  const queueUrl = (consumerId: string) => `${deps.baseUrl.replace(/\/+$/, '')}${SQS_PATH}${encodeURIComponent(consumerId)}`;
  // Every queue the request names, by its path or its QueueUrl, must be the caller's; posted to a
  // queue's URL, QueueUrl may be left out.
  const ownQueue = (caller: SqsCaller, body: Body) => {
    if (caller.pathQueue !== undefined && caller.pathQueue !== caller.consumerId) throw queueDoesNotExist();
    if (caller.pathQueue !== undefined && body.QueueUrl === undefined) return;
    if (queueNameOf(requiredString(body, 'QueueUrl')) !== caller.consumerId) throw queueDoesNotExist();
  };

  return new Map<string, Action>([
    [
      'GetQueueUrl',
      async (caller, body) => {
        if (requiredString(body, 'QueueName') !== caller.consumerId) throw queueDoesNotExist();
        return { QueueUrl: queueUrl(caller.consumerId) };
      },
    ],
    [
      'GetQueueAttributes',
      async (caller, body) => {
        ownQueue(caller, body);
        const names = optionalStrings(body, 'AttributeNames') ?? [];
        const unknown = names.find((n) => n !== 'All' && !QUEUE_ATTRIBUTES.has(n));
        if (unknown !== undefined)
          throw new SqsError(400, 'InvalidAttributeName', `Unknown Attribute ${unknown}; this queue has ${[...QUEUE_ATTRIBUTES].join(', ')}`);
        const wanted = (name: string) => names.includes('All') || names.includes(name);
        const attributes: Record<string, string> = {};
        if (COUNTED_ATTRIBUTES.some(wanted)) {
          const stats = await deps.stats(caller.consumerId);
          const values = {
            ApproximateNumberOfMessages: stats?.visible ?? 0,
            ApproximateNumberOfMessagesNotVisible: stats?.inFlight ?? 0,
            ApproximateNumberOfMessagesDelayed: stats?.delayed ?? 0,
          };
          for (const name of COUNTED_ATTRIBUTES) if (wanted(name)) attributes[name] = String(values[name]);
        }
        for (const [name, value] of Object.entries(FIXED_ATTRIBUTES)) if (wanted(name)) attributes[name] = value;
        if (wanted('QueueArn')) attributes.QueueArn = `arn:aws:sqs:${deps.region}:${SQS_ACCOUNT_ID}:${caller.consumerId}`;
        if (DATED_ATTRIBUTES.some(wanted)) {
          const dates = await deps.queueDates(caller.consumerId);
          const seconds = (date: Date | undefined) => String(Math.floor((date?.getTime() ?? 0) / 1000));
          if (wanted('CreatedTimestamp')) attributes.CreatedTimestamp = seconds(dates?.createdAt);
          if (wanted('LastModifiedTimestamp')) attributes.LastModifiedTimestamp = seconds(dates?.modifiedAt);
        }
        return Object.keys(attributes).length > 0 ? { Attributes: attributes } : {};
      },
    ],
    [
      'ReceiveMessage',
      async (caller, body, res) => {
        ownQueue(caller, body);
        const maxMessages = optionalInteger(body, 'MaxNumberOfMessages', 1, MAX_BATCH_ENTRIES) ?? 1;
        const waitSeconds = optionalInteger(body, 'WaitTimeSeconds', 0, MAX_WAIT_SECONDS) ?? 0;
        const visibilitySeconds = optionalInteger(body, 'VisibilityTimeout', 0, MAX_VISIBILITY_SECONDS) ?? Number(FIXED_ATTRIBUTES.VisibilityTimeout);
        const named = [...(optionalStrings(body, 'AttributeNames') ?? []), ...(optionalStrings(body, 'MessageSystemAttributeNames') ?? [])];
        const messages = await receive(deps.pull, caller.consumerId, {
          maxMessages,
          waitMs: waitSeconds * 1000,
          visibilityMs: visibilitySeconds * 1000,
          signal: hangUpSignal(res),
          tools: caller.tools,
        });
        if (messages.length === 0) return {};
        const receivedAt = Date.now();
        return { Messages: messages.map((m) => sqsMessage(deps.pull, caller.consumerId, m, named, receivedAt)) };
      },
    ],
    [
      'DeleteMessage',
      async (caller, body) => {
        ownQueue(caller, body);
        const [result] = await acknowledge(deps.pull, caller.consumerId, [requiredString(body, 'ReceiptHandle')], caller.tools);
        throwIfFailed(result, 'delete');
        return {};
      },
    ],
    [
      'DeleteMessageBatch',
      async (caller, body) => {
        ownQueue(caller, body);
        const entries = batchEntries(body, (entry) => ({ handle: requiredString(entry, 'ReceiptHandle') }));
        const results = await acknowledge(
          deps.pull,
          caller.consumerId,
          entries.map((e) => e.handle),
          caller.tools,
        );
        return batchAnswer(entries, results, 'delete');
      },
    ],
    [
      'ChangeMessageVisibility',
      async (caller, body) => {
        ownQueue(caller, body);
        const handle = requiredString(body, 'ReceiptHandle');
        const [result] = await changeVisibility(deps.pull, caller.consumerId, [
          { handle, seconds: requiredInteger(body, 'VisibilityTimeout', 0, MAX_VISIBILITY_SECONDS) },
        ]);
        throwIfFailed(result, 'change');
        return {};
      },
    ],
    [
      'ChangeMessageVisibilityBatch',
      async (caller, body) => {
        ownQueue(caller, body);
        const entries = batchEntries(body, (entry) => ({
          handle: requiredString(entry, 'ReceiptHandle'),
          seconds: requiredInteger(entry, 'VisibilityTimeout', 0, MAX_VISIBILITY_SECONDS),
        }));
        return batchAnswer(entries, await changeVisibility(deps.pull, caller.consumerId, entries), 'change');
      },
    ],
    [
      'PurgeQueue',
      async (caller, body) => {
        ownQueue(caller, body);
        if (!(await unavailableOnFailure(() => deps.purgeMarks.take(caller.consumerId)))) {
          throw new SqsError(400, 'PurgeQueueInProgress', `Only one PurgeQueue of a queue is allowed every ${PURGE_INTERVAL_MS / 1000} seconds`);
        }
        try {
          await deps.purge(caller.consumerId);
        } catch (err) {
          // A purge that did not happen does not hold the queue's next one back.
          await deps.purgeMarks.release(caller.consumerId).catch(() => undefined);
          throw err;
        }
        return {};
      },
    ],
  ]);
}

/**
 * VisibilityTimeout 0 is a nack: the message (and the leased run of its correlation id after it) is
 * visible again at once, its handle spent. Any other value moves the end of the lease, which keeps
 * its handle. All zeros of a batch are released first, then the rest moved, one statement each.
 *
 * The zeros go latest delivery first: released head first, a run's followers would come back
 * MessageNotInflight, spent by their head in the same call, though the caller held every lease and
 * asked for exactly what happened. Latest first, each is still current when its turn comes, so an
 * entry answers success exactly when its lease was current at the call.
 */
async function changeVisibility(deps: PullDeps, consumerId: string, entries: Array<{ handle: string; seconds: number }>): Promise<HandleResult[]> {
  const results = new Array<HandleResult>(entries.length);
  const bySeconds = new Map<number, number[]>();
  entries.forEach((e, i) => {
    const positions = bySeconds.get(e.seconds) ?? [];
    positions.push(i);
    bySeconds.set(e.seconds, positions);
  });
  for (const [seconds, positions] of [...bySeconds].sort(([a], [b]) => a - b)) {
    if (seconds === 0) positions.sort(latestDeliveryFirst(deps, consumerId, entries));
    const handles = positions.map((i) => entries[i]!.handle);
    const answered =
      seconds === 0
        ? await release(deps, consumerId, handles, 0)
        : await settle(deps, consumerId, handles, (leases) => deps.store.extend(consumerId, leases, seconds * 1000));
    positions.forEach((position, k) => {
      results[position] = answered[k]!;
    });
  }
  return results;
}

/** Orders entry positions by their handles' delivery ids, latest first (delivery ids grow in queue order); unreadable handles last. */
function latestDeliveryFirst(deps: PullDeps, consumerId: string, entries: Array<{ handle: string }>): (a: number, b: number) => number {
  const ids = entries.map((e) => {
    const lease = deps.handles.open(consumerId, e.handle);
    return lease && /^[0-9]+$/.test(lease.deliveryId) ? BigInt(lease.deliveryId) : -1n;
  });
  return (a, b) => (ids[b]! > ids[a]! ? 1 : ids[b]! < ids[a]! ? -1 : a - b);
}

/** An SQS message of a leased delivery: Body the producer's exact bytes, their MD5, and the attributes asked for. */
function sqsMessage(deps: PullDeps, consumerId: string, m: LeasedMessage, attributeNames: string[], receivedAt: number): Record<string, unknown> {
  const text = sqsText(m.body);
  const body = text ?? m.body.toString('base64');
  const wanted = MESSAGE_ATTRIBUTES.filter((name) => attributeNames.includes('All') || attributeNames.includes(name));
  const attribute = (name: (typeof MESSAGE_ATTRIBUTES)[number]): string => {
    switch (name) {
      case 'MessageGroupId':
        return m.correlationId;
      case 'MessageDeduplicationId':
        return m.messageId;
      case 'SentTimestamp':
        return String(m.publishedAt.getTime());
      case 'ApproximateReceiveCount':
        return String(m.receiveCount);
      // Delivery ids grow in the queue's order, as a FIFO queue's sequence numbers do.
      case 'SequenceNumber':
        return m.deliveryId;
      // The bus's sender is the producing system: the envelope's system_id.
      case 'SenderId':
        return senderOf(text);
      // The bus keeps no first receive's time: this receive's on the first, else the publish's (a lower bound).
      case 'ApproximateFirstReceiveTimestamp':
        return String(m.receiveCount <= 1 ? receivedAt : m.publishedAt.getTime());
    }
  };
  // Bytes SQS could not carry as a body (not UTF-8, or characters outside XML 1.0, which no XML answer
  // can hold; the gateway accepts neither today): base64, said so.
  const encoding = text === undefined ? { BodyEncoding: { DataType: 'String', StringValue: 'base64' } } : undefined;
  return {
    MessageId: m.messageId,
    ReceiptHandle: deps.handles.issue({ consumerId, deliveryId: m.deliveryId, generation: m.generation }),
    MD5OfBody: md5Hex(Buffer.from(body, 'utf8')),
    Body: body,
    ...(wanted.length > 0 ? { Attributes: Object.fromEntries(wanted.map((name) => [name, attribute(name)])) } : {}),
    ...(encoding ? { MessageAttributes: encoding, MD5OfMessageAttributes: md5OfStringAttributes({ BodyEncoding: 'base64' }) } : {}),
  };
}

function senderOf(text: string | undefined): string {
  try {
    const value: unknown = text === undefined ? undefined : JSON.parse(text);
    const systemId = isObject(value) ? value.system_id : undefined;
    return typeof systemId === 'string' ? systemId : '';
  } catch {
    return '';
  }
}

/** The bytes as an SQS body's text when they are UTF-8 of XML 1.0 characters; else undefined. */
function sqsText(bytes: Buffer): string | undefined {
  const text = exactText(bytes);
  return text === undefined || !isXmlText(text) ? undefined : text;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The bytes as text when they are UTF-8 (a BOM kept), so the text's UTF-8 is exactly them; else undefined. */
function exactText(bytes: Buffer): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

const md5Hex = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');

/** SQS's MD5OfMessageAttributes of String attributes: per name in order, length-prefixed name, type, transport 1, value. */
function md5OfStringAttributes(attributes: Record<string, string>): string {
  const field = (text: string) => {
    const bytes = Buffer.from(text, 'utf8');
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    return [length, bytes];
  };
  const parts = Object.keys(attributes)
    .sort()
    .flatMap((name) => [...field(name), ...field('String'), Buffer.from([1]), ...field(attributes[name]!)]);
  return md5Hex(Buffer.concat(parts));
}

type Verb = 'delete' | 'change';

/** The SQS error of one failed handle: forged or another queue's → ReceiptHandleIsInvalid; no longer the current lease → expired. */
function failureOf(result: Extract<HandleResult, { status: 'failed' }>, verb: Verb): SqsError {
  if (result.code === 'receipt_handle.invalid') return new SqsError(400, 'ReceiptHandleIsInvalid', 'The receipt handle is not one this queue issued');
  return verb === 'delete'
    ? invalid('The receipt handle has expired: the message was received again, released, or deleted')
    : new SqsError(400, 'MessageNotInflight', "The receipt handle is no longer the message's current lease");
}

function throwIfFailed(result: HandleResult | undefined, verb: Verb): void {
  if (result?.status === 'failed') throw failureOf(result, verb);
}

/** Successful and Failed per entry Id, as SQS's batch calls answer (a failure is the sender's). */
function batchAnswer(entries: Array<{ id: string }>, results: HandleResult[], verb: Verb) {
  const answer: { Successful: Array<{ Id: string }>; Failed: Array<{ Id: string; SenderFault: true; Code: string; Message: string }> } = {
    Successful: [],
    Failed: [],
  };
  entries.forEach((entry, i) => {
    const result = results[i];
    if (result?.status === 'done') answer.Successful.push({ Id: entry.id });
    else if (result) {
      const failure = failureOf(result, verb);
      answer.Failed.push({ Id: entry.id, SenderFault: true, Code: failure.code, Message: failure.message });
    }
  });
  return answer;
}

/** Entries: 1 to 10 objects, each with a distinct Id of SQS's form. */
function batchEntries<T>(body: Body, read: (entry: Body) => T): Array<T & { id: string }> {
  const entries = body.Entries;
  if (entries === undefined) throw missing('Entries');
  if (!Array.isArray(entries)) throw invalid('Entries must be a list');
  if (entries.length === 0) throw new SqsError(400, 'EmptyBatchRequest', 'The batch request does not contain any entries');
  if (entries.length > MAX_BATCH_ENTRIES) throw new SqsError(400, 'TooManyEntriesInBatchRequest', `At most ${MAX_BATCH_ENTRIES} entries in a batch`);
  const seen = new Set<string>();
  return entries.map((entry: unknown) => {
    if (!isObject(entry)) throw invalid('Each entry must be an object');
    const id = requiredString(entry, 'Id');
    if (!BATCH_ENTRY_ID.test(id)) throw new SqsError(400, 'InvalidBatchEntryId', 'An entry Id is 1 to 80 letters, digits, hyphens and underscores');
    if (seen.has(id)) throw new SqsError(400, 'BatchEntryIdsNotDistinct', `Two entries have the Id ${id}`);
    seen.add(id);
    return { ...read(entry), id };
  });
}

/**
 * The request's JSON object, read as every JSON body of the bus is (I-JSON: a member name twice is
 * refused, not settled by keeping the last); anything else is InvalidParameterValue (an empty body is
 * `{}`, as SDKs send it).
 */
function bodyOf(bytes: Buffer): Body {
  if (bytes.length === 0) return {};
  const parsed = parseIJson(bytes);
  if (!parsed.ok) throw invalid(`The body must be a JSON object (AWS JSON 1.0): ${ijsonProblemText(parsed.problem)}`);
  if (!isObject(parsed.value)) throw invalid('The body must be a JSON object (AWS JSON 1.0)');
  return parsed.value;
}

const isObject = (value: unknown): value is Body => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The queue name of a QueueUrl: its last path segment (the host is not compared: proxies rewrite it). */
function queueNameOf(url: string): string | undefined {
  try {
    return decodeURIComponent(new URL(url).pathname.split('/').filter(Boolean).pop() ?? '');
  } catch {
    return undefined;
  }
}

// Another connection's queue and one that does not exist are one answer: nothing tells which names exist.
const queueDoesNotExist = () => new SqsError(400, 'QueueDoesNotExist', 'The specified queue does not exist');

function requiredString(body: Body, name: string): string {
  const value = body[name];
  if (value === undefined) throw missing(name);
  if (typeof value !== 'string' || value.length === 0) throw invalid(`${name} must be a non-empty string`);
  return value;
}

function optionalStrings(body: Body, name: string): string[] | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) throw invalid(`${name} must be a list of strings`);
  return value as string[];
}

function optionalInteger(body: Body, name: string, min: number, max: number): number | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) throw invalid(`${name} must be an integer from ${min} to ${max}`);
  return value;
}

function requiredInteger(body: Body, name: string, min: number, max: number): number {
  const value = optionalInteger(body, name, min, max);
  if (value === undefined) throw missing(name);
  return value;
}
