import { UsageError } from './errors';

export const DEFAULT_URL = 'http://127.0.0.1:8090';

export interface Portal {
  /** The admin API's root, e.g. http://127.0.0.1:8090/api/admin. */
  adminUrl: string;
  /** The HTTP Basic header value: kept here, never printed. */
  authorization: string;
}

/**
 * The portal to talk to and the operator credentials, from --url and the BUSCTL_* environment.
 * Missing credentials are a usage error naming the variable, before any request is made.
 */
export function portalFrom(env: Readonly<Record<string, string | undefined>>, urlFlag: string | undefined): Portal {
  const base = urlFlag ?? (env.BUSCTL_URL || DEFAULT_URL);
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new UsageError(`${urlFlag === undefined ? 'BUSCTL_URL' : '--url'} is not a URL: '${base}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`the portal URL must be http or https, not '${base}'`);
  // Credentials in the URL would end up in shell history and in every error that quotes the URL.
  if (url.username || url.password) throw new UsageError('the portal URL must not carry credentials: set BUSCTL_CLIENT_ID and BUSCTL_CLIENT_SECRET');
  const clientId = env.BUSCTL_CLIENT_ID;
  if (!clientId) throw new UsageError('BUSCTL_CLIENT_ID is not set: the operator client id');
  const clientSecret = env.BUSCTL_CLIENT_SECRET;
  if (!clientSecret) throw new UsageError('BUSCTL_CLIENT_SECRET is not set: the operator client secret');
  return {
    adminUrl: `${url.origin}${url.pathname.replace(/\/+$/, '')}/api/admin`,
    // RFC 7617: "id:secret" in UTF-8, base64.
    authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`, 'utf8').toString('base64')}`,
  };
}
