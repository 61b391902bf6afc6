/** Padded base64, as RFC 7617 sends the credentials. */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** What an `Authorization` header says as HTTP Basic: each caller decides what a refusal answers. */
export type BasicAuthorization =
  | { readonly kind: 'absent' }
  | { readonly kind: 'other-scheme' }
  | { readonly kind: 'malformed' }
  | { readonly kind: 'basic'; readonly userId: string; readonly password: string };

/**
 * RFC 7617: `Authorization: Basic base64(user-id ":" password)`, the password after the first colon.
 * The one reader of it: the token route form-decodes the parts further (RFC 6749 §2.3.1), the admin
 * API compares them as they are.
 */
export function readBasicAuthorization(header: string | undefined): BasicAuthorization {
  if (header === undefined) return { kind: 'absent' };
  const match = /^Basic +(\S+) *$/i.exec(header);
  if (!match) return { kind: 'other-scheme' };
  const encoded = match[1] as string;
  if (!BASE64.test(encoded) || encoded.length % 4 !== 0) return { kind: 'malformed' };
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return { kind: 'malformed' };
  return { kind: 'basic', userId: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
