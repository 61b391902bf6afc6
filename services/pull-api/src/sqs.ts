import { createHash } from 'node:crypto';
import type { Router, NextFunction, Request, RequestHandler, Response } from 'express';
import { ijsonProblemText, parseIJson, type QueueOperations } from '@bus/contracts';
import type { ConsumerTools } from '@bus/db';
import { createRouter, HttpError, type ErrorPage } from '@bus/http';
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
import { PULL_LIMITS } from './pull-routes';
import type { LeasedMessage } from '@bus/queue';

/**
 * The SQS-compatible door of the pull API (docs/delivery.md, "SQS-compatible reads"): the AWS JSON 1.0
 * protocol of @aws-sdk/client-sqs on one path, over the same queue operations and receipt handles as
 * the consumer routes. Signed with SigV4 for the service `sqs`, by a verified principal of an active
 * consumer connection; its queue is that connection (QueueName = connection id).
 */
export const SQS_PATH = '/v1/sqs/';
/** Both spellings of the door's endpoint: AWS SDKs differ in whether they add the slash to the one configured (botocore does not). */
const SQS_PATHS = [SQS_PATH, SQS_PATH.slice(0, -1)];
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
const FIXED_ATTRIBUTES = { FifoQueue: 'true', ContentBasedDeduplication: 'false', VisibilityTimeout: '30', ReceiveMessageWaitTimeSeconds: '0' } as const;
const COUNTED_ATTRIBUTES = ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'] as const;
const QUEUE_ATTRIBUTES = new Set<string>([...COUNTED_ATTRIBUTES, ...Object.keys(FIXED_ATTRIBUTES)]);
const MESSAGE_ATTRIBUTES = ['MessageGroupId', 'MessageDeduplicationId', 'SentTimestamp', 'ApproximateReceiveCount'] as const;

/**
 * A refusal of the SQS door: `code` is the SQS error code an SDK reads from `__type` (its exception's
 * name); the rule `sqs.<code>` names it in logs and metrics.
 */
export class SqsError extends HttpError {
  override readonly name = 'SqsError';
  constructor(
    status: 400 | 401 | 403,
    readonly code: string,
    message: string,
  ) {
    super(status, `sqs.${code}`, message);
  }
}

const invalid = (message: string) => new SqsError(400, 'InvalidParameterValue', message);
const missing = (name: string) => new SqsError(400, 'MissingParameter', `The request must contain the parameter ${name}`);

/**
 * Every error answer on the door's path in AWS JSON 1.0, `{ "__type", "message" }`, the status kept:
 * the door's own SqsErrors, and the host's and the shared steps' refusals under the nearest SQS code
 * (429 RequestThrottled, 503 ServiceUnavailable, ...), so an SDK always reads a code.
 */
export const sqsErrorAnswer: ErrorPage = (req, err) => {
  if (!SQS_PATHS.includes(req.path)) return undefined;
  return { json: { __type: `${ERROR_NAMESPACE}${sqsCodeOf(err)}`, message: err.message }, headers: { 'Content-Type': AWS_JSON_MEDIA_TYPE } };
};

function sqsCodeOf(err: HttpError): string {
  if (err instanceof SqsError) return err.code;
  if (err.status === 429) return 'RequestThrottled';
  if (err.status === 503) return 'ServiceUnavailable';
  if (err.status === 405) return 'UnsupportedOperation';
  if (err.status === 401 || err.status === 403) return 'AccessDenied';
  if (err.status >= 500) return 'InternalFailure';
  return 'InvalidParameterValue';
}

export interface SqsRoutesDeps {
  pull: PullDeps;
  /** The consumer's queue counts: delivery's queue stats, the ones the admin API shows. */
  stats: QueueOperations['stats'];
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
}

type Body = Record<string, unknown>;
type Action = (caller: SqsCaller, body: Body, res: Response) => Promise<unknown>;

/**
 * POST /v1/sqs/ with X-Amz-Target: AmazonSQS.<Action>: the signature (none is 401
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
  const authorize = async (principal: SigningPrincipal, _req: Request, res: Response) => {
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
    res.locals.sqsCaller = { consumerId: connection.id, tools: connection.consumerTools } satisfies SqsCaller;
  };
  const actions = sqsActions(deps);

  const router = createRouter();
  router.post(
    SQS_PATHS,
    ...signedRouteSteps({ verifier, authorize, limit: deps.limit, maxBodyBytes: PULL_LIMITS.bodyBytes }),
    async (req: Request, res: Response) => {
      const target = req.header('x-amz-target') ?? '';
      const action = target.startsWith(TARGET_PREFIX) ? actions.get(target.slice(TARGET_PREFIX.length)) : undefined;
      if (!action) throw new SqsError(400, 'InvalidAction', `X-Amz-Target must be AmazonSQS.<Action>, one of: ${[...actions.keys()].join(', ')}`);
      const answer = await action(res.locals.sqsCaller as SqsCaller, bodyOf(res.locals.body as Buffer), res);
      res.set('Content-Type', AWS_JSON_MEDIA_TYPE).json(answer);
    },
  );
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
  const ownQueue = (caller: SqsCaller, body: Body) => {
    const url = requiredString(body, 'QueueUrl');
    if (queueNameOf(url) !== caller.consumerId) throw queueDoesNotExist();
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
        const aborted = new AbortController();
        res.on('close', () => aborted.abort());
        const messages = await receive(deps.pull, caller.consumerId, {
          maxMessages,
          waitMs: waitSeconds * 1000,
          visibilityMs: visibilitySeconds * 1000,
          signal: aborted.signal,
          tools: caller.tools,
        });
        if (messages.length === 0) return {};
        return { Messages: messages.map((m) => sqsMessage(deps.pull, caller.consumerId, m, named)) };
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
  ]);
}

/**
 * VisibilityTimeout 0 is a nack: the message (and the leased run of its correlation id after it) is
 * visible again at once, its handle spent. Any other value moves the end of the lease, which keeps
 * its handle. All zeros of a batch are released first, in order, then the rest moved, one statement each.
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

/** An SQS message of a leased delivery: Body the producer's exact bytes, their MD5, and the attributes asked for. */
function sqsMessage(deps: PullDeps, consumerId: string, m: LeasedMessage, attributeNames: string[]): Record<string, unknown> {
  const text = exactText(m.body);
  const body = text ?? m.body.toString('base64');
  const attributes: Record<(typeof MESSAGE_ATTRIBUTES)[number], string> = {
    MessageGroupId: m.correlationId,
    MessageDeduplicationId: m.messageId,
    SentTimestamp: String(m.publishedAt.getTime()),
    ApproximateReceiveCount: String(m.receiveCount),
  };
  const wanted = MESSAGE_ATTRIBUTES.filter((name) => attributeNames.includes('All') || attributeNames.includes(name));
  // Bytes that are not UTF-8 (never accepted by today's gateway) cannot be a JSON string: base64, said so.
  const encoding = text === undefined ? { BodyEncoding: { DataType: 'String', StringValue: 'base64' } } : undefined;
  return {
    MessageId: m.messageId,
    ReceiptHandle: deps.handles.issue({ consumerId, deliveryId: m.deliveryId, generation: m.generation }),
    MD5OfBody: md5Hex(Buffer.from(body, 'utf8')),
    Body: body,
    ...(wanted.length > 0 ? { Attributes: Object.fromEntries(wanted.map((name) => [name, attributes[name]])) } : {}),
    ...(encoding ? { MessageAttributes: encoding, MD5OfMessageAttributes: md5OfStringAttributes({ BodyEncoding: 'base64' }) } : {}),
  };
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
