import { ConfigError, duration, optional, str, url, type ConfigOf } from '@bus/config';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/**
 * The portal's sign-in for people (docs/portal.md). Off when PORTAL_OIDC_ISSUER is unset (the admin
 * API and the catalogue work as before); when it is set, the client id, secret and redirect URL are
 * required too (peopleSignInOf names whichever is missing).
 */
export const peopleConfig = {
  /** The identity provider's issuer; its /.well-known/openid-configuration is read at the first sign-in. */
  PORTAL_OIDC_ISSUER: optional(url({ protocols: ['https:', 'http:'] })),
  PORTAL_OIDC_CLIENT_ID: optional(str({ pattern: /^[\x21-\x7e]{1,200}$/ })),
  /** Never logged. */
  PORTAL_OIDC_CLIENT_SECRET: optional(str({ minLength: 16 })),
  /** Where the provider sends the browser back: <portal address>/portal/callback. https outside loopback. */
  PORTAL_OIDC_REDIRECT_URL: optional(url({ protocols: ['https:', 'http:'] })),
  /** The claim (in the ID token or from userinfo) listing a person's roles: `operator`, `house_admin:<org id>`, … */
  PORTAL_OIDC_ACCESS_CLAIM: str({ pattern: /^[A-Za-z0-9_:./-]{1,100}$/, default: 'bus_access' }),
  PORTAL_OIDC_SCOPES: str({ pattern: /^[\x21-\x7e]+( [\x21-\x7e]+)*$/, default: 'openid profile email' }),
  /** A session unused this long ends. */
  PORTAL_SESSION_IDLE_TIMEOUT: duration({ default: 30 * MINUTE_MS, min: MINUTE_MS, max: DAY_MS }),
  /** A session ends this long after sign-in whatever its use (at most 1 day: PORTAL_SESSION_RETENTION sweeps after it). */
  PORTAL_SESSION_MAX_AGE: duration({ default: 12 * 60 * MINUTE_MS, min: 5 * MINUTE_MS, max: DAY_MS }),
} as const;

export interface PeopleSignIn {
  issuer: string;
  clientId: string;
  clientSecret: string;
  redirectUrl: string;
  accessClaim: string;
  scopes: string;
  idleTimeoutMs: number;
  maxAgeMs: number;
  /** Secure cookies: everywhere but a plain-http loopback address (local development). */
  secureCookies: boolean;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** The sign-in settings, undefined when PORTAL_OIDC_ISSUER is unset; throws a ConfigError naming each missing or unsafe variable. */
export function peopleSignInOf(config: ConfigOf<typeof peopleConfig>): PeopleSignIn | undefined {
  if (config.PORTAL_OIDC_ISSUER === undefined) return undefined;
  const problems: Array<{ variable: string; problem: string }> = [];
  const required = (variable: 'PORTAL_OIDC_CLIENT_ID' | 'PORTAL_OIDC_CLIENT_SECRET' | 'PORTAL_OIDC_REDIRECT_URL'): string => {
    const value = config[variable];
    if (value === undefined) problems.push({ variable, problem: 'is required when PORTAL_OIDC_ISSUER is set' });
    return value ?? '';
  };
  const clientId = required('PORTAL_OIDC_CLIENT_ID');
  const clientSecret = required('PORTAL_OIDC_CLIENT_SECRET');
  const redirectUrl = required('PORTAL_OIDC_REDIRECT_URL');
  for (const variable of ['PORTAL_OIDC_ISSUER', 'PORTAL_OIDC_REDIRECT_URL'] as const) {
    const value = config[variable];
    if (value !== undefined && new URL(value).protocol === 'http:' && !LOOPBACK.has(new URL(value).hostname)) {
      problems.push({ variable, problem: 'must be https unless it is a loopback address (local development)' });
    }
  }
  if (redirectUrl && !new URL(redirectUrl).pathname.endsWith('/portal/callback')) {
    problems.push({ variable: 'PORTAL_OIDC_REDIRECT_URL', problem: 'must be the portal address followed by /portal/callback' });
  }
  if (config.PORTAL_SESSION_IDLE_TIMEOUT > config.PORTAL_SESSION_MAX_AGE) {
    problems.push({ variable: 'PORTAL_SESSION_IDLE_TIMEOUT', problem: 'must not be longer than PORTAL_SESSION_MAX_AGE' });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    issuer: config.PORTAL_OIDC_ISSUER,
    clientId,
    clientSecret,
    redirectUrl,
    accessClaim: config.PORTAL_OIDC_ACCESS_CLAIM,
    scopes: config.PORTAL_OIDC_SCOPES,
    idleTimeoutMs: config.PORTAL_SESSION_IDLE_TIMEOUT,
    maxAgeMs: config.PORTAL_SESSION_MAX_AGE,
    secureCookies: new URL(redirectUrl).protocol === 'https:',
  };
}
