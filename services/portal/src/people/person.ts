import { SignInFailedError } from './errors';
import { grantsOfClaim, type Grant } from './policy';

/**
 * A session holds at most this many grants: every portal answer and list filter is built from them
 * (`GET /api/portal/me` lists them), so an access claim naming more organisations is refused rather
 * than silently cut — a person in that many organisations needs the operator role instead.
 */
export const MAX_GRANTS = 100;
/** OpenID Connect's own bound on `sub` (255 ASCII characters). */
export const SUBJECT_MAX_CHARS = 255;
/** The name shown in the portal's header; a longer display name is shortened. */
export const NAME_MAX_CHARS = 200;

export interface Person {
  subject: string;
  name: string;
  grants: Grant[];
}

/** Who signs in, from the ID token's and userinfo's claims; SignInFailedError when they cannot make a session. */
export function personOfClaims(claims: Record<string, unknown>, accessClaim: string): Person {
  const subject = typeof claims.sub === 'string' ? claims.sub : '';
  if (subject === '' || subject.length > SUBJECT_MAX_CHARS)
    throw new SignInFailedError(`the identity provider's subject (sub) is empty or longer than ${SUBJECT_MAX_CHARS} characters`);
  const grants = grantsOfClaim(claims[accessClaim]);
  if (grants.length === 0) throw new SignInFailedError(`your account has no roles for this bus (claim ${accessClaim})`);
  if (grants.length > MAX_GRANTS)
    throw new SignInFailedError(`your account has ${grants.length} roles for this bus, more than the ${MAX_GRANTS} a session holds (claim ${accessClaim})`);
  const shown = [claims.name, claims.email].find((value): value is string => typeof value === 'string' && value.trim() !== '') ?? subject;
  return { subject, name: [...shown].slice(0, NAME_MAX_CHARS).join(''), grants };
}
