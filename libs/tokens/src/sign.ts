import type { KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';
import type { AccessTokenClaims } from './claims';

/** Header alg ES256, typ JWT, kid = the signing key's thumbprint (docs/api.md#access-token). */
export async function signAccessToken(claims: AccessTokenClaims, key: { kid: string; privateKey: KeyObject }): Promise<string> {
  return new SignJWT({ ...claims }).setProtectedHeader({ alg: 'ES256', typ: 'JWT', kid: key.kid }).sign(key.privateKey);
}
