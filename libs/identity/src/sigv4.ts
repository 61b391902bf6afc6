import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { HttpError, readBody } from '@bus/http';
import { createLimiter, enforce, type LimitMetrics, type Redis } from '@bus/limits';
import { parseSignature, payloadHashOf, signatureMatches, SigV4Refusal, type ParsedSignature, type SigV4Request } from '@bus/tokens';
import { unavailableOnFailure } from './authenticate';

/** 401 producer.unauthenticated for a signed request (docs/api.md#authentication, #errors); the reason stays in logs and tests. */
export class SignatureRefusedError extends HttpError {
  override readonly name = 'SignatureRefusedError';
  constructor(readonly refusal: SigV4Refusal) {
    super(refusal.status, refusal.rule, refusal.message, 'policy');
  }
}

/** What an access key id resolves to: at least its secret. Each signed route adds what it needs (the connection). */
export interface SigningKey {
  secretAccessKey: string;
  /** A revoked key signs nothing: answered exactly as an unknown one. */
  revoked: boolean;
}

/** AWS_SIGV4_LIMIT_PER_SECOND and AWS_SIGV4_LIMIT_BURST (sigv4Config). */
export interface SignedRequestLimitConfig {
  AWS_SIGV4_LIMIT_PER_SECOND: number;
  AWS_SIGV4_LIMIT_BURST: number;
}

/**
 * The one limit of all AWS-signed requests together (docs/api.md#limits: 50 a second, bursts of 100), counted in
 * Redis under one name, so the gateway's signed routes and the pull API's SQS door share it. As the
 * whole-API limit, the burst above the rate is spread over 10 s. The middleware runs before the body is read.
 */
export function signedRequestLimit(redis: Redis, config: SignedRequestLimitConfig, metrics?: LimitMetrics): RequestHandler {
  const extra = config.AWS_SIGV4_LIMIT_BURST - config.AWS_SIGV4_LIMIT_PER_SECOND;
  const limiter = createLimiter(
    redis,
    {
      name: 'sigv4',
      label: 'signed_routes',
      rate: { points: config.AWS_SIGV4_LIMIT_PER_SECOND, durationSeconds: 1 },
      ...(extra > 0 ? { burst: { points: extra, durationSeconds: 10 } } : {}),
    },
    metrics,
  );
  return (_req, _res, next) => {
    enforce([[limiter, 'all']], 'All AWS-signed requests together are over their limit').then(() => next(), next);
  };
}

export interface SigV4VerifierDeps<K extends SigningKey> {
  /** AWS_SIGV4_REGION. */
  region: string;
  /** `execute-api` for the publish routes, `sqs` for the SQS endpoint. */
  service: string;
  /** AWS_SIGV4_MAX_SKEW: how far X-Amz-Date may be from the bus's clock either way. */
  maxSkewMs: number;
  /** The access key id's secret and owner; undefined for a key the bus does not know. A failure is a 503. */
  resolve(accessKeyId: string): Promise<K | undefined>;
  now?: () => Date;
}

/** A request whose headers passed; `verify` checks the signature over a payload hash. */
export interface SignedRequest<K extends SigningKey> {
  key: K;
  signature: ParsedSignature;
  /** Recomputes the signature over exactly the signed headers and `payloadHash`; throws SignatureRefusedError. */
  verify(payloadHash: string): void;
}

export interface SigV4Verifier<K extends SigningKey> {
  /** Every check the headers allow (libs/tokens parseSignature) and the key's lookup; throws SignatureRefusedError. */
  inspect(req: Request): Promise<SignedRequest<K>>;
}

/**
 * The I/O half of SigV4 for every signed route (docs/auth.md, "AWS SigV4"), parameterised by the
 * service name and by how an access key id resolves: the clock and the key lookup. An unknown or
 * revoked key and a bad signature are the same 401. As AWS, a signature is accepted again and again
 * within the skew window: a repeated request is made safe by what it does (a publish is idempotent by
 * message_id, principals/verify's challenge is one-time), not by refusing a signature seen before.
 */
export function createSigV4Verifier<K extends SigningKey>(deps: SigV4VerifierDeps<K>): SigV4Verifier<K> {
  const now = deps.now ?? (() => new Date());
  const refuse = (reason: ConstructorParameters<typeof SigV4Refusal>[0]) => new SignatureRefusedError(new SigV4Refusal(reason));
  return {
    inspect: async (req) => {
      const request: SigV4Request = { method: req.method, target: req.originalUrl, headers: req.headers };
      let signature: ParsedSignature;
      try {
        signature = parseSignature(request, { region: deps.region, service: deps.service }, now(), deps.maxSkewMs);
      } catch (err) {
        if (err instanceof SigV4Refusal) throw new SignatureRefusedError(err);
        throw err;
      }
      const key = await unavailableOnFailure(() => deps.resolve(signature.accessKeyId));
      if (!key || key.revoked) throw refuse('signature');
      return {
        key,
        signature,
        verify: (payloadHash) => {
          if (!signatureMatches(request, signature, key.secretAccessKey, payloadHash)) throw refuse('signature');
        },
      };
    },
  };
}

export interface SignedRouteSteps<K extends SigningKey> {
  verifier: SigV4Verifier<K>;
  /** After the signature verified: the route's own checks of the key's owner (status, connection, tenant); throws its refusal. */
  authorize(key: K, req: Request, res: Response): Promise<void>;
  /** The signed routes' shared limit (docs/api.md#limits), run before the body is read. */
  limit: RequestHandler;
  maxBodyBytes: number;
}

/**
 * The steps of a signed route with a body, in order: the headers (and the signature, when
 * x-amz-content-sha256 declares the body's hash, then `authorize`), the shared limit, then the body
 * (at most maxBodyBytes) checked against the declared hash — or, without one, the signature over
 * the body's own hash and `authorize`. The body is left in res.locals.body.
 */
export function signedRouteSteps<K extends SigningKey>(steps: SignedRouteSteps<K>): RequestHandler[] {
  const headers = async (req: Request, res: Response, next: NextFunction) => {
    const signed = await steps.verifier.inspect(req);
    res.locals.signed = signed;
    const declared = signed.signature.declaredPayloadHash;
    if (declared !== undefined) {
      signed.verify(declared);
      await steps.authorize(signed.key, req, res);
    }
    next();
  };
  const body = async (req: Request, res: Response, next: NextFunction) => {
    const signed = res.locals.signed as SignedRequest<K>;
    const bytes = await readBody(req, steps.maxBodyBytes);
    res.locals.body = bytes;
    const declared = signed.signature.declaredPayloadHash;
    if (declared === undefined) {
      signed.verify(payloadHashOf(bytes));
      await steps.authorize(signed.key, req, res);
    } else if (declared !== payloadHashOf(bytes)) {
      throw new SignatureRefusedError(new SigV4Refusal('payload_hash'));
    }
    next();
  };
  return [headers, steps.limit, body];
}
