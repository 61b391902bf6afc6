import { ConfigError, loadConfig } from '@bus/config';
import { peopleConfig, peopleSignInOf } from './config';

/** The sign-in settings of an environment, as the portal reads them at start-up. */
const signInOf = (env: Record<string, string>) => peopleSignInOf(loadConfig(peopleConfig, env));

/** The variables start-up names, each with its problem. */
function refused(env: Record<string, string>): Array<{ variable: string; problem: string }> {
  try {
    signInOf(env);
  } catch (err) {
    if (err instanceof ConfigError) return [...err.problems];
    throw err;
  }
  throw new Error('the settings were accepted');
}

const LOCAL = {
  PORTAL_OIDC_ISSUER: 'http://127.0.0.1:8093',
  PORTAL_OIDC_CLIENT_ID: 'bus-portal',
  PORTAL_OIDC_CLIENT_SECRET: 'a-client-secret-of-some-length',
  PORTAL_OIDC_REDIRECT_URL: 'http://127.0.0.1:8090/portal/callback',
};

describe('the portal sign-in settings at start-up (peopleSignInOf)', () => {
  it('leaves sign-in off without an issuer, whatever else is set', () => {
    expect(signInOf({})).toBeUndefined();
    expect(signInOf({ PORTAL_OIDC_CLIENT_ID: 'bus-portal' })).toBeUndefined();
  });

  it('takes a loopback provider over plain http, with plain cookies and the default timeouts and claim', () => {
    expect(signInOf(LOCAL)).toEqual({
      issuer: 'http://127.0.0.1:8093',
      clientId: 'bus-portal',
      clientSecret: 'a-client-secret-of-some-length',
      redirectUrl: 'http://127.0.0.1:8090/portal/callback',
      accessClaim: 'bus_access',
      scopes: 'openid profile email',
      idleTimeoutMs: 30 * 60_000,
      maxAgeMs: 12 * 3_600_000,
      secureCookies: false,
    });
  });

  it('uses Secure cookies behind an https redirect URL', () => {
    const signIn = signInOf({
      ...LOCAL,
      PORTAL_OIDC_ISSUER: 'https://idp.example.com/realms/bus',
      PORTAL_OIDC_REDIRECT_URL: 'https://portal.example.com/portal/callback',
    });
    expect(signIn?.secureCookies).toBe(true);
  });

  it('names every variable the issuer needs and is missing, at once', () => {
    expect(refused({ PORTAL_OIDC_ISSUER: 'https://idp.example.com' }).map((p) => p.variable)).toEqual([
      'PORTAL_OIDC_CLIENT_ID',
      'PORTAL_OIDC_CLIENT_SECRET',
      'PORTAL_OIDC_REDIRECT_URL',
    ]);
  });

  it.each([
    [
      'plain http to a provider elsewhere',
      { PORTAL_OIDC_ISSUER: 'http://idp.example.com' },
      'PORTAL_OIDC_ISSUER',
      'must be https unless it is a loopback address',
    ],
    [
      'plain http back to a portal elsewhere',
      { PORTAL_OIDC_REDIRECT_URL: 'http://portal.example.com/portal/callback' },
      'PORTAL_OIDC_REDIRECT_URL',
      'must be https unless',
    ],
    [
      'a redirect URL that is not the callback',
      { PORTAL_OIDC_REDIRECT_URL: 'http://127.0.0.1:8090/portal' },
      'PORTAL_OIDC_REDIRECT_URL',
      'followed by /portal/callback',
    ],
    [
      'an idle timeout longer than the session',
      { PORTAL_SESSION_IDLE_TIMEOUT: '2h', PORTAL_SESSION_MAX_AGE: '1h' },
      'PORTAL_SESSION_IDLE_TIMEOUT',
      'must not be longer than PORTAL_SESSION_MAX_AGE',
    ],
    ['a short client secret', { PORTAL_OIDC_CLIENT_SECRET: 'too-short' }, 'PORTAL_OIDC_CLIENT_SECRET', ''],
    ['a session longer than a day', { PORTAL_SESSION_MAX_AGE: '2d' }, 'PORTAL_SESSION_MAX_AGE', ''],
  ])('refuses %s, naming the variable', (_what, change, variable, problem) => {
    expect(refused({ ...LOCAL, ...change })).toEqual([{ variable, problem: expect.stringContaining(problem) }]);
  });

  it('never puts the client secret in what it says', () => {
    const secret = 'a-client-secret-of-some-length';
    const problems = refused({ ...LOCAL, PORTAL_OIDC_CLIENT_SECRET: secret, PORTAL_OIDC_REDIRECT_URL: 'http://127.0.0.1:8090/elsewhere' });
    expect(JSON.stringify(problems)).not.toContain(secret);
  });
});
