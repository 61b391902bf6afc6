import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import fc from 'fast-check';
import { parseSignature, payloadHashOf, signatureMatches, SigV4Refusal, type SigV4Reason, type SigV4Request, type SigV4Scope } from './sigv4';

// Every vector is signed by AWS's own signer (@smithy/signature-v4), never by hand.
const credentials = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };
const scope: SigV4Scope = { region: 'eu-west-1', service: 'execute-api' };
const signedAt = new Date('2026-03-01T12:00:00Z');
const SKEW = 5 * 60_000;

interface Unsigned {
  method?: string;
  path?: string;
  query?: Record<string, string | string[]>;
  headers?: Record<string, string>;
  body?: string;
}

function signer(options: { region?: string; service?: string; applyChecksum?: boolean; sessionToken?: string } = {}): SignatureV4 {
  return new SignatureV4({
    credentials: { ...credentials, ...(options.sessionToken ? { sessionToken: options.sessionToken } : {}) },
    region: options.region ?? scope.region,
    service: options.service ?? scope.service,
    sha256: Hash.bind(null, 'sha256'),
    ...(options.applyChecksum === undefined ? {} : { applyChecksum: options.applyChecksum }),
  });
}

/** The query string a client puts on the wire for the signer's query object (AWS URI encoding). */
function wireQuery(query: Record<string, string | string[]>): string {
  const escape = (v: string) => encodeURIComponent(v).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return Object.entries(query)
    .flatMap(([name, value]) => (Array.isArray(value) ? value : [value]).map((v) => `${escape(name)}=${escape(v)}`))
    .join('&');
}

/** Signs with the SDK and returns the request as the server sees it (lowercase header names). */
async function signed(request: Unsigned, options: Parameters<typeof signer>[0] & { at?: Date } = {}): Promise<{ request: SigV4Request; body: Buffer }> {
  const path = request.path ?? '/v1/tenants/wabcdefghijkl/iam/messages';
  const query = request.query ?? {};
  const body = request.body ?? '{"message_id":"m1"}';
  const out = await signer(options).sign(
    {
      method: request.method ?? 'POST',
      protocol: 'https:',
      hostname: 'bus.example',
      path,
      query,
      headers: { host: 'bus.example', 'content-type': 'application/json', ...request.headers },
      body,
    },
    { signingDate: options.at ?? signedAt },
  );
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(out.headers)) headers[name.toLowerCase()] = value;
  const q = wireQuery(query);
  return { request: { method: out.method, target: q === '' ? path : `${path}?${q}`, headers }, body: Buffer.from(body, 'utf8') };
}

function verifies(request: SigV4Request, body: Buffer, secret = credentials.secretAccessKey, rules: SigV4Scope = scope): boolean {
  const parsed = parseSignature(request, rules, signedAt, SKEW);
  const payloadHash = parsed.declaredPayloadHash ?? payloadHashOf(body);
  return parsed.declaredPayloadHash === payloadHashOf(body) || parsed.declaredPayloadHash === undefined
    ? signatureMatches(request, parsed, secret, payloadHash)
    : false;
}

function refusal(request: SigV4Request, rules: SigV4Scope = scope, now = signedAt): SigV4Reason | undefined {
  try {
    parseSignature(request, rules, now, SKEW);
    return undefined;
  } catch (err) {
    if (err instanceof SigV4Refusal) return err.reason;
    throw err;
  }
}

const withHeader = (request: SigV4Request, name: string, value: string): SigV4Request => ({ ...request, headers: { ...request.headers, [name]: value } });

describe('SigV4 verification against @smithy/signature-v4', () => {
  it('accepts what the SDK signs: any path, query, extra headers and body', async () => {
    const segment = fc
      .string({ minLength: 1, maxLength: 12, unit: fc.constantFrom(..."abcXYZ019-_.~ %+!*()'é/".split('')) })
      .filter((s) => s !== '.' && s !== '..' && !s.includes('/'));
    const token = fc.string({ minLength: 1, maxLength: 8, unit: fc.constantFrom(...'abcXYZ019-_.~ =&+!*é'.split('')) });
    await fc.assert(
      fc.asyncProperty(
        fc.array(segment, { minLength: 1, maxLength: 5 }),
        fc.dictionary(token, fc.oneof(token, fc.array(token, { minLength: 1, maxLength: 3 })), { maxKeys: 4 }),
        fc.dictionary(
          fc.constantFrom('x-amz-meta-a', 'x-custom', 'content-language', 'x-amz-target'),
          fc.string({ minLength: 1, maxLength: 20, unit: fc.constantFrom(...'ab  c\t1,;'.split('')) }).filter((v) => v.trim() !== ''),
        ),
        fc.string({ maxLength: 200 }),
        fc.constantFrom('POST', 'GET', 'PUT'),
        fc.boolean(),
        async (segments, query, headers, body, method, applyChecksum) => {
          // The path on the wire is percent-encoded once, as SDK serializers encode labels.
          const path = '/' + segments.map((s) => encodeURIComponent(s)).join('/');
          const { request, body: bytes } = await signed({ method, path, query, headers, body }, { applyChecksum });
          expect(verifies(request, bytes)).toBe(true);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('accepts a request without a body and without x-amz-content-sha256 (the empty body hash)', async () => {
    const { request, body } = await signed({ method: 'GET', body: '' }, { applyChecksum: false });
    expect(request.headers['x-amz-content-sha256']).toBeUndefined();
    expect(verifies(request, body)).toBe(true);
  });

  it('refuses a tampered body, header, path, query, method or signature, and another secret', async () => {
    const { request, body } = await signed({ query: { a: '1' }, headers: { 'x-custom': 'v' } });
    expect(verifies(request, Buffer.from('{"message_id":"m2"}'))).toBe(false);
    expect(verifies(withHeader(request, 'x-custom', 'w'), body)).toBe(false);
    expect(verifies(withHeader(request, 'content-type', 'text/plain'), body)).toBe(false);
    expect(verifies({ ...request, target: request.target.replace('wabcdefghijkl', 'wzzzzzzzzzzzz') }, body)).toBe(false);
    expect(verifies({ ...request, target: request.target.replace('a=1', 'a=2') }, body)).toBe(false);
    expect(verifies({ ...request, method: 'PUT' }, body)).toBe(false);
    const authorization = String(request.headers.authorization);
    const flipped = authorization.slice(0, -1) + (authorization.endsWith('0') ? '1' : '0');
    expect(verifies(withHeader(request, 'authorization', flipped), body)).toBe(false);
    expect(verifies(request, body, 'another-secret-another-secret-another-se')).toBe(false);
    // Without x-amz-content-sha256 the body itself is signed.
    const unhashed = await signed({}, { applyChecksum: false });
    expect(verifies(unhashed.request, unhashed.body)).toBe(true);
    expect(verifies(unhashed.request, Buffer.from('{}'))).toBe(false);
  });

  it('ignores headers that were not signed (user-agent), as AWS does', async () => {
    const { request, body } = await signed({});
    expect(verifies(withHeader(request, 'user-agent', 'curl/8'), body)).toBe(true);
  });

  it("refuses a wrong region or service, and a scope whose date is not X-Amz-Date's", async () => {
    expect(refusal((await signed({}, { region: 'us-east-1' })).request)).toBe('region');
    expect(refusal((await signed({}, { service: 'sqs' })).request)).toBe('service');
    const { request } = await signed({});
    const authorization = String(request.headers.authorization).replace('/20260301/', '/20260302/');
    expect(refusal(withHeader(request, 'authorization', authorization))).toBe('scope');
    expect(refusal(withHeader(request, 'authorization', String(request.headers.authorization).replace('aws4_request', 'aws5_request')))).toBe('scope');
  });

  it('refuses a date outside the skew either way, and accepts one at its edge', async () => {
    expect(refusal((await signed({}, { at: new Date(signedAt.getTime() - SKEW - 1000) })).request)).toBe('skew');
    expect(refusal((await signed({}, { at: new Date(signedAt.getTime() + SKEW + 1000) })).request)).toBe('skew');
    expect(refusal((await signed({}, { at: new Date(signedAt.getTime() - SKEW) })).request)).toBeUndefined();
  });

  it('refuses query-string signatures, session tokens, SigV4a, streaming and UNSIGNED-PAYLOAD', async () => {
    const presigned = await signer().presign(
      { method: 'POST', protocol: 'https:', hostname: 'bus.example', path: '/v1/x', query: {}, headers: { host: 'bus.example' } },
      { signingDate: signedAt },
    );
    expect(refusal({ method: 'POST', target: `/v1/x?${wireQuery(presigned.query as Record<string, string>)}`, headers: { host: 'bus.example' } })).toBe(
      'query_signature',
    );
    expect(refusal((await signed({}, { sessionToken: 'FwoGZXIvYXdzEXAMPLE' })).request)).toBe('security_token');
    const { request } = await signed({});
    expect(refusal(withHeader(request, 'authorization', String(request.headers.authorization).replace('AWS4-HMAC-SHA256', 'AWS4-ECDSA-P256-SHA256')))).toBe(
      'algorithm',
    );
    expect(refusal((await signed({ headers: { 'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD' } })).request)).toBe('streaming');
    const unsigned = (await signed({ headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } })).request;
    expect(refusal(unsigned)).toBe('unsigned_payload');
    expect(refusal(unsigned, { ...scope, allowUnsignedPayload: true })).toBeUndefined();
    expect(refusal((await signed({ headers: { 'x-amz-content-sha256': 'not-a-hash' } })).request)).toBe('payload_hash');
  });

  it('needs host, x-amz-date and every x-amz-* header sent to be signed, and every signed header sent', async () => {
    const { request } = await signed({});
    expect(refusal(withHeader(request, 'x-amz-target', 'AmazonSQS.ReceiveMessage'))).toBe('unsigned_header');
    const withoutHost = { ...request, headers: { ...request.headers, host: undefined } };
    expect(refusal(withoutHost)).toBe('unsigned_header');
    const hostUnsigned = String(request.headers.authorization).replace('SignedHeaders=content-type;host;', 'SignedHeaders=content-type;');
    expect(refusal(withHeader(request, 'authorization', hostUnsigned))).toBe('unsigned_header');
  });

  it('refuses a missing, foreign or malformed Authorization header and a malformed X-Amz-Date', async () => {
    const { request } = await signed({});
    expect(refusal({ ...request, headers: { ...request.headers, authorization: undefined } })).toBe('missing');
    expect(refusal(withHeader(request, 'authorization', 'Bearer abc'))).toBe('missing');
    expect(refusal(withHeader(request, 'authorization', 'AWS4-HMAC-SHA256 Credential=AKIA/x'))).toBe('malformed');
    const unsorted = String(request.headers.authorization).replace('content-type;host', 'host;content-type');
    expect(refusal(withHeader(request, 'authorization', unsorted))).toBe('malformed');
    expect(refusal(withHeader(request, 'x-amz-date', '2026-03-01T12:00:00Z'))).toBe('date');
    expect(refusal(withHeader(request, 'x-amz-date', '20260231T120000Z'))).toBe('date');
  });

  it('names every refusal producer.unauthenticated, and the unknown-key and bad-signature answer alike', () => {
    const refused = new SigV4Refusal('signature');
    expect({ status: refused.status, rule: refused.rule }).toEqual({ status: 401, rule: 'producer.unauthenticated' });
    expect(refused.message).toMatch(/not known/);
  });
});
