import { decodeJwt, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { FORBIDDEN_HEADER, decodeJsonSegment } from './verify';
import { TokenRejectedError, type UnauthenticatedReason } from './refusals';

/**
 * Tokens of an external identity provider (docs/auth.md): an issuer the operator registered
 * (or configured for a managed app), whose keys the bus fetches from the issuer's JWKS URL. Pure
 * rules here; fetching and caching the key set is libs/identity's.
 */

/** Asymmetric JWS algorithms only: HS* (a shared secret the bus cannot hold) and none are never accepted. */
export const EXTERNAL_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;
export type ExternalAlgorithm = (typeof EXTERNAL_ALGORITHMS)[number];
export const DEFAULT_EXTERNAL_ALGORITHMS: readonly ExternalAlgorithm[] = ['RS256', 'PS256', 'ES256', 'EdDSA'];

/** The claim whose value names the provider's client (the one a binding maps to a connection). */
export const CLIENT_CLAIMS = ['azp', 'client_id', 'sub'] as const;
export type ClientClaim = (typeof CLIENT_CLAIMS)[number];

export const DEFAULT_CLOCK_TOLERANCE_SECONDS = 60;
export const MAX_CLOCK_TOLERANCE_SECONDS = 300;

/** An issuer whose tokens the bus verifies: the registered provider's settings, or a managed app's. */
export interface ExternalIssuer {
  /** Compared with the token's iss exactly (no normalisation). */
  issuer: string;
  jwksUrl: string;
  /** The token's aud must name at least one. */
  audiences: readonly string[];
  algorithms: readonly ExternalAlgorithm[];
  clientClaim: ClientClaim;
  clockToleranceSeconds: number;
}

/** A JWKS URL must be https; http only to a loopback host when the deployment allows it (tests). */
export function jwksUrlProblem(raw: string, allowHttpLoopback: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'jwks_url is not a URL';
  }
  if (url.username || url.password || url.hash) return 'jwks_url must not carry a user or a fragment';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && allowHttpLoopback && isLoopback(url.hostname)) return undefined;
  return allowHttpLoopback ? 'jwks_url must be https (http only to a loopback host)' : 'jwks_url must be https';
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/** Problems of a provider's settings, each naming its field; empty when they are usable. */
export function externalIssuerProblems(issuer: ExternalIssuer, opts: { allowHttpLoopback: boolean }): string[] {
  const problems: string[] = [];
  if (!ISSUER_FORM.test(issuer.issuer)) problems.push('issuer must be an http(s) URL of printable characters, compared with iss exactly');
  const urlProblem = jwksUrlProblem(issuer.jwksUrl, opts.allowHttpLoopback);
  if (urlProblem) problems.push(urlProblem);
  if (issuer.audiences.length === 0 || issuer.audiences.some((a) => a.length === 0)) problems.push('audiences must name at least one non-empty audience');
  if (issuer.algorithms.length === 0) problems.push('algorithms must name at least one algorithm');
  const refused = issuer.algorithms.filter((a) => !(EXTERNAL_ALGORITHMS as readonly string[]).includes(a));
  if (refused.length > 0)
    problems.push(`algorithms: ${refused.join(', ')} not allowed (asymmetric only: ${EXTERNAL_ALGORITHMS.join(', ')}; never HS* or none)`);
  if (!(CLIENT_CLAIMS as readonly string[]).includes(issuer.clientClaim)) problems.push(`client_claim must be one of ${CLIENT_CLAIMS.join(', ')}`);
  if (!Number.isInteger(issuer.clockToleranceSeconds) || issuer.clockToleranceSeconds < 0 || issuer.clockToleranceSeconds > MAX_CLOCK_TOLERANCE_SECONDS) {
    problems.push(`clock_tolerance_seconds must be a whole number from 0 to ${MAX_CLOCK_TOLERANCE_SECONDS}`);
  }
  return problems;
}

/**
 * What a registered issuer and a bound client value can be (admin.json says the same): printable
 * ASCII of bounded length. A token claiming anything else is refused before any lookup, so hostile
 * input never reaches the registry (a NUL would fail the read: a 503 instead of a 401).
 */
export const ISSUER_FORM = /^https?:\/\/[\x21-\x7E]{1,1992}$/;
export const CLIENT_FORM = /^[\x20-\x7E]{1,500}$/;

/** The token's iss, read without verifying anything: it only chooses the verifier, which checks it again. */
export function unverifiedIssuer(token: string): string | undefined {
  try {
    const iss = decodeJwt(token).iss;
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The provider's key set could not be fetched (unreachable, a timeout, not a key set): the token
 * cannot be judged, so the caller answers a retryable 503, not a 401.
 */
export class KeySetUnavailableError extends Error {
  override readonly name = 'KeySetUnavailableError';
  constructor(
    readonly issuer: string,
    cause: unknown,
  ) {
    super(`the key set of ${issuer} could not be fetched`, { cause });
  }
}

export interface VerifiedExternalToken {
  /** The value of the issuer's client claim. */
  client: string;
  claims: JWTPayload;
}

/**
 * Verifies a token of `issuer` with keys from `keys` (jose's remote key set): the algorithm from the
 * issuer's list, a kid-selected key from its JWKS only (never jku, x5u or an embedded jwk), exact iss,
 * an aud among the audiences, exp required and checked with the issuer's clock tolerance, nbf and
 * iat too, and the client claim a non-empty string. Throws TokenRejectedError (401) or
 * KeySetUnavailableError (503).
 */
export async function verifyExternalToken(token: string, issuer: ExternalIssuer, keys: JWTVerifyGetKey, now: Date): Promise<VerifiedExternalToken> {
  const parts = token.split('.');
  if (parts.length !== 3) throw new TokenRejectedError('malformed');
  const header = decodeJsonSegment(parts[0] as string);
  if (typeof header.alg !== 'string' || !(issuer.algorithms as readonly string[]).includes(header.alg)) throw new TokenRejectedError('algorithm');
  if (FORBIDDEN_HEADER.some((name) => name in header)) throw new TokenRejectedError('header');
  // A fetch failure is told apart from a bad token: jose reports both as errors of the key lookup.
  const keyOrUnavailable: JWTVerifyGetKey = async (protectedHeader, input) => {
    try {
      return await keys(protectedHeader, input);
    } catch (err) {
      if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys) throw new TokenRejectedError('unknown_key');
      throw new KeySetUnavailableError(issuer.issuer, err);
    }
  };
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, keyOrUnavailable, {
      issuer: issuer.issuer,
      audience: [...issuer.audiences],
      algorithms: [...issuer.algorithms],
      clockTolerance: issuer.clockToleranceSeconds,
      currentDate: now,
      requiredClaims: ['exp'],
    }));
  } catch (err) {
    if (err instanceof KeySetUnavailableError || err instanceof TokenRejectedError) throw err;
    throw new TokenRejectedError(rejectionOf(err));
  }
  const client = payload[issuer.clientClaim];
  if (typeof client !== 'string' || client.length === 0) throw new TokenRejectedError('claims');
  return { client, claims: payload };
}

function rejectionOf(err: unknown): UnauthenticatedReason {
  if (err instanceof errors.JWTExpired) return 'expired';
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'iss') return 'issuer';
    if (err.claim === 'aud') return 'audience';
    if (err.claim === 'nbf' || err.claim === 'iat') return 'not_yet_valid';
    return 'claims';
  }
  if (err instanceof errors.JOSEAlgNotAllowed) return 'algorithm';
  return 'signature';
}
