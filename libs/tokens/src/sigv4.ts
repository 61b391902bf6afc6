import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * AWS Signature Version 4 verification, the pure part (docs/auth.md, "AWS SigV4"): what a signed
 * request must carry, its canonical request and string to sign exactly as AWS's signers build them
 * (@smithy/signature-v4), and a constant-time comparison. Key lookup and the clock are the caller's
 * (libs/identity sigv4.ts); nothing here does I/O.
 */

export const SIGV4_ALGORITHM = 'AWS4-HMAC-SHA256';
export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';
/** The SHA-256 of an empty body, the payload hash of a request without one. */
export const EMPTY_PAYLOAD_HASH = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/** Why a signed request is refused; for logs and tests. Every one is 401 producer.unauthenticated. */
export type SigV4Reason =
  | 'missing'
  | 'malformed'
  | 'algorithm'
  | 'query_signature'
  | 'security_token'
  | 'streaming'
  | 'unsigned_payload'
  | 'scope'
  | 'region'
  | 'service'
  | 'date'
  | 'skew'
  | 'unsigned_header'
  | 'payload_hash'
  | 'signature';

const MESSAGES: Record<SigV4Reason, string> = {
  missing: 'An AWS4-HMAC-SHA256 Authorization header is required',
  malformed: 'The Authorization header is not a well-formed AWS4-HMAC-SHA256 signature',
  algorithm: 'Only AWS4-HMAC-SHA256 signatures are accepted (not SigV4a)',
  query_signature: 'Sign the request in the Authorization header; query-string (presigned) signatures are not accepted',
  security_token: 'Temporary credentials (x-amz-security-token) are not accepted: sign with the access key the bus issued',
  streaming: 'Streaming (chunked) payload signatures are not accepted: sign the whole body',
  unsigned_payload: 'UNSIGNED-PAYLOAD is not accepted on this route: sign the body',
  scope: 'The credential scope must be <date>/<region>/<service>/aws4_request with the date of X-Amz-Date',
  region: 'The credential scope names another region than this bus signs for',
  service: 'The credential scope names another service than this route',
  date: 'X-Amz-Date must be signed and of the form YYYYMMDDTHHMMSSZ',
  skew: "X-Amz-Date is too far from the bus's clock: check the signer's clock",
  unsigned_header: 'host, x-amz-date and every x-amz-* header sent must be signed, and every signed header sent',
  payload_hash: 'The body does not match x-amz-content-sha256',
  // An unknown access key and a wrong signature get the same answer: nothing tells which keys exist.
  signature: 'The signature does not match, or the access key is not known',
};

/** A signed request refused (docs/api.md#authentication, #errors: 401 producer.unauthenticated); `reason` stays in logs and tests. */
export class SigV4Refusal extends Error {
  override readonly name = 'SigV4Refusal';
  readonly status = 401;
  readonly rule = 'producer.unauthenticated';
  constructor(readonly reason: SigV4Reason) {
    super(MESSAGES[reason]);
  }
}

/** The request as the server received it: method, the raw request target (path and query), header values. */
export interface SigV4Request {
  method: string;
  /** The raw request target, e.g. `/v1/tenants/w1/iam/messages?a=b` (Node's req.url before any rewrite). */
  target: string;
  /** Header names lowercase, as Node gives them; repeated headers joined by ", ". */
  headers: Readonly<Record<string, string | readonly string[] | undefined>>;
}

export interface SigV4Scope {
  /** The region this bus signs for (AWS_SIGV4_REGION). */
  region: string;
  /** `execute-api` for the publish routes, `sqs` for the SQS endpoint. */
  service: string;
  /** Accept `x-amz-content-sha256: UNSIGNED-PAYLOAD` (never on publish routes). */
  allowUnsignedPayload?: boolean;
}

/** What the Authorization header and the x-amz-* headers say, checked except for the signature itself. */
export interface ParsedSignature {
  accessKeyId: string;
  /** X-Amz-Date as sent (YYYYMMDDTHHMMSSZ) and as a time. */
  amzDate: string;
  signedAt: Date;
  /** `<date>/<region>/<service>/aws4_request`. */
  scope: string;
  signedHeaders: readonly string[];
  /** 64 lowercase hex characters. */
  signature: string;
  /** x-amz-content-sha256 when sent (lowercase hex, or UNSIGNED-PAYLOAD where allowed). */
  declaredPayloadHash: string | undefined;
}

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 +Credential=([A-Za-z0-9]{16,128})\/([0-9]{8})\/([a-z0-9-]{1,64})\/([a-z0-9-]{1,64})\/([a-z0-9_]{1,32}) *, *SignedHeaders=([a-z0-9!#$%&'*+.^_`|~-]+(?:;[a-z0-9!#$%&'*+.^_`|~-]+)*) *, *Signature=([0-9a-f]{64}) *$/;
const AMZ_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;
const HEX_SHA256 = /^[0-9a-f]{64}$/;
const QUERY_SIGNING_PARAMETERS = new Set(['x-amz-signature', 'x-amz-credential', 'x-amz-algorithm', 'x-amz-security-token', 'x-amz-region-set']);

/**
 * Checks everything but the signature, in this order: the Authorization header's algorithm and
 * shape, no query-string signature, no session token, the credential scope (date of X-Amz-Date,
 * region, service, aws4_request), host, x-amz-date and every x-amz-* header signed, the clock skew,
 * and the payload hash's form. Throws SigV4Refusal.
 */
export function parseSignature(request: SigV4Request, scope: SigV4Scope, now: Date, maxSkewMs: number): ParsedSignature {
  const query = request.target.includes('?') ? request.target.slice(request.target.indexOf('?') + 1) : '';
  for (const [name] of queryPairs(query)) {
    if (QUERY_SIGNING_PARAMETERS.has(name.toLowerCase())) throw new SigV4Refusal('query_signature');
  }
  const authorization = single(request.headers.authorization);
  if (authorization === undefined) throw new SigV4Refusal('missing');
  if (!authorization.startsWith(`${SIGV4_ALGORITHM} `)) {
    throw new SigV4Refusal(/^AWS4-/.test(authorization) ? 'algorithm' : 'missing');
  }
  if (request.headers['x-amz-security-token'] !== undefined) throw new SigV4Refusal('security_token');
  if (request.headers['x-amz-region-set'] !== undefined) throw new SigV4Refusal('algorithm');
  const match = AUTHORIZATION.exec(authorization);
  if (!match) throw new SigV4Refusal('malformed');
  const [, accessKeyId, scopeDate, region, service, terminator, signedHeaderList, signature] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];

  const amzDate = single(request.headers['x-amz-date']);
  const parts = amzDate === undefined ? null : AMZ_DATE.exec(amzDate);
  if (amzDate === undefined || !parts) throw new SigV4Refusal('date');
  const [, y, mo, d, h, mi, s] = parts.map(Number) as [number, number, number, number, number, number, number];
  const signedAt = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  if (Number.isNaN(signedAt.getTime()) || signedAt.getUTCDate() !== d || signedAt.getUTCHours() !== h || signedAt.getUTCMinutes() !== mi)
    throw new SigV4Refusal('date');

  if (terminator !== 'aws4_request' || scopeDate !== amzDate.slice(0, 8)) throw new SigV4Refusal('scope');
  if (region !== scope.region) throw new SigV4Refusal('region');
  if (service !== scope.service) throw new SigV4Refusal('service');

  const signedHeaders = signedHeaderList.split(';');
  const sorted = [...signedHeaders].sort();
  if (new Set(signedHeaders).size !== signedHeaders.length || sorted.some((name, i) => name !== signedHeaders[i])) throw new SigV4Refusal('malformed');
  const sent = Object.keys(request.headers).filter((name) => request.headers[name] !== undefined);
  const mustSign = ['host', 'x-amz-date', ...sent.filter((name) => name.startsWith('x-amz-'))];
  if (mustSign.some((name) => !signedHeaders.includes(name)) || signedHeaders.some((name) => request.headers[name] === undefined)) {
    throw new SigV4Refusal('unsigned_header');
  }

  if (Math.abs(now.getTime() - signedAt.getTime()) > maxSkewMs) throw new SigV4Refusal('skew');

  const declaredPayloadHash = single(request.headers['x-amz-content-sha256']);
  if (declaredPayloadHash !== undefined) {
    if (declaredPayloadHash.startsWith('STREAMING-')) throw new SigV4Refusal('streaming');
    if (declaredPayloadHash === UNSIGNED_PAYLOAD) {
      if (!scope.allowUnsignedPayload) throw new SigV4Refusal('unsigned_payload');
    } else if (!HEX_SHA256.test(declaredPayloadHash)) {
      throw new SigV4Refusal('payload_hash');
    }
  }
  return { accessKeyId, amzDate, signedAt, scope: `${scopeDate}/${region}/${service}/aws4_request`, signedHeaders, signature, declaredPayloadHash };
}

/** The lowercase hex SHA-256 of a body, as x-amz-content-sha256 carries it. */
export function payloadHashOf(body: Buffer): string {
  return createHash('sha256').update(body).digest('hex');
}

/** SigV4's canonical request over exactly the signed headers (AWS's "Create a canonical request"). */
export function canonicalRequest(request: SigV4Request, signed: Pick<ParsedSignature, 'signedHeaders'>, payloadHash: string): string {
  const q = request.target.indexOf('?');
  const path = q === -1 ? request.target : request.target.slice(0, q);
  const query = q === -1 ? '' : request.target.slice(q + 1);
  const headers = signed.signedHeaders.map((name) => `${name}:${canonicalHeaderValue(request.headers[name])}`);
  return [request.method.toUpperCase(), canonicalPath(path), canonicalQuery(query), ...headers, '', signed.signedHeaders.join(';'), payloadHash].join('\n');
}

export function stringToSign(signed: Pick<ParsedSignature, 'amzDate' | 'scope'>, canonical: string): string {
  return [SIGV4_ALGORITHM, signed.amzDate, signed.scope, createHash('sha256').update(canonical, 'utf8').digest('hex')].join('\n');
}

/** The signature the secret gives over the request; compared with the sent one in constant time. */
export function signatureMatches(request: SigV4Request, signed: ParsedSignature, secretAccessKey: string, payloadHash: string): boolean {
  const [date, region, service] = signed.scope.split('/') as [string, string, string];
  let key: Buffer = Buffer.from(`AWS4${secretAccessKey}`, 'utf8');
  for (const part of [date, region, service, 'aws4_request']) key = createHmac('sha256', key).update(part, 'utf8').digest();
  const expected = createHmac('sha256', key)
    .update(stringToSign(signed, canonicalRequest(request, signed, payloadHash)), 'utf8')
    .digest();
  return timingSafeEqual(expected, Buffer.from(signed.signature, 'hex'));
}

/** AWS's URI encoding: RFC 3986 unreserved characters kept, everything else %XX uppercase. */
function escapeUri(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * The path as non-S3 services sign it: dot segments and empty segments removed, then the path as
 * sent (already percent-encoded once) encoded once more, slashes kept.
 */
function canonicalPath(path: string): string {
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const normalized = `${path.startsWith('/') ? '/' : ''}${segments.join('/')}${segments.length > 0 && path.endsWith('/') ? '/' : ''}`;
  return escapeUri(normalized).replace(/%2F/g, '/');
}

/** Query parameters decoded, each name and value AWS-encoded, sorted by name then by value. */
function canonicalQuery(query: string): string {
  return queryPairs(query)
    .map(([name, value]) => [escapeUri(name), escapeUri(value)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

function queryPairs(query: string): Array<[string, string]> {
  if (query === '') return [];
  return query
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const eq = pair.indexOf('=');
      return eq === -1 ? [decode(pair), ''] : [decode(pair.slice(0, eq)), decode(pair.slice(eq + 1))];
    });
}

function decode(component: string): string {
  try {
    return decodeURIComponent(component);
  } catch {
    // A malformed escape cannot match anything a signer produced; kept as sent, it fails the signature.
    return component;
  }
}

function canonicalHeaderValue(value: string | readonly string[] | undefined): string {
  const joined = typeof value === 'string' ? value : (value ?? []).join(',');
  return joined
    .replace(/[\r\n]/g, ' ')
    .replace(/[ \t]+/g, ' ')
    .replace(/^ | $/g, '');
}

function single(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : value?.[0];
}
