import { timingSafeEqual } from 'node:crypto';
import type { Router, NextFunction, Request, Response } from 'express';
import * as oidc from 'openid-client';
import type { Logger } from '@bus/observability';
import type { PeopleSignIn } from './config';
import { CsrfRefusedError, PortalUnavailableError, SignInFailedError, SignInRequiredError } from './errors';
import { randomToken, SIGN_IN_VALIDITY_MS, type PeopleStore, type Session } from './people-store';
import { personOfClaims } from './person';
import { createRouter } from '@bus/http';

const LOGIN_COOKIE = 'bus_portal_login';
/**
 * The ID token, kept for sign-out only (the id_token_hint of RP-initiated logout): HttpOnly and sent to
 * /portal/logout alone. A token too large for a cookie is not kept; the provider then asks who signs out.
 */
const ID_TOKEN_COOKIE = 'bus_portal_id_token';
const ID_TOKEN_MAX_CHARS = 3500;
/** The page a signed-out person asked for, kept beside the sign-in's state until the callback returns there. */
const RETURN_COOKIE = 'bus_portal_return';
/** Pages a signed-out person may open: the sign-in page itself, the sign-in's steps and the assets. */
const OPEN_PAGES = /^\/portal(\/?$|\/login$|\/callback$|\/assets\/)/;
/** A page of this portal only (never another origin: no `//`, no backslash), at most 1,000 characters. */
const RETURN_PATH = /^\/portal\/(?!\/)[A-Za-z0-9._~!$&'()*+,;=:@%/?-]{0,990}$/;
const SOME_ORIGIN = 'http://portal.invalid';

/**
 * Where the callback sends the person: the page they asked for, when it is one of the portal's. A
 * path the URL parser would change is refused: a browser resolves its dot segments (`..`, `%2e%2e`,
 * `.%2E`, ...) and would leave /portal.
 */
export function returnPathOf(value: unknown): string | undefined {
  if (typeof value !== 'string' || !RETURN_PATH.test(value)) return undefined;
  const parsed = new URL(value, SOME_ORIGIN);
  return parsed.pathname + parsed.search === value && parsed.pathname.startsWith('/portal/') ? value : undefined;
}

/** A cookie's value as res.cookie wrote it (URI-encoded); undefined when it is not. */
function decodedCookie(value: string | undefined): string | undefined {
  try {
    return value === undefined ? undefined : decodeURIComponent(value);
  } catch {
    return undefined;
  }
}
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The session cookie's name: the __Host- prefix (Secure, path /, no Domain) wherever cookies are Secure. */
export function sessionCookieName(signIn: PeopleSignIn): string {
  return signIn.secureCookies ? '__Host-bus_portal_session' : 'bus_portal_session';
}

/** One cookie of the request's Cookie header. */
export function cookieOf(req: Request, name: string): string | undefined {
  for (const part of (req.header('cookie') ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The signed-in person of this request (set by `loadSession`), if any. */
export function sessionOf(res: Response): Session | undefined {
  return res.locals.portalSession as Session | undefined;
}

/** The signed-in person, or 401 portal.sign_in_required. */
export function requireSession(res: Response): Session {
  const session = sessionOf(res);
  if (!session) throw new SignInRequiredError();
  return session;
}

export interface SignInDeps {
  signIn: PeopleSignIn;
  /** Its failures are the 503 portal.unavailable (service.ts wraps it). */
  store: PeopleStore;
  logger: Logger;
}

/**
 * The provider's configuration, discovered at the first sign-in and kept; a failed discovery is
 * retried at the next one (the portal starts while its provider is down, and signs people in once
 * it is up).
 */
function discoverer(signIn: PeopleSignIn): () => Promise<oidc.Configuration> {
  let discovered: Promise<oidc.Configuration> | undefined;
  const issuer = new URL(signIn.issuer);
  return () => {
    discovered ??= oidc
      .discovery(issuer, signIn.clientId, signIn.clientSecret, undefined, {
        // Plain http only for a loopback provider (config.ts refuses it elsewhere).
        ...(issuer.protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : {}),
        timeout: 5,
      })
      .catch((err: unknown) => {
        discovered = undefined;
        throw new PortalUnavailableError(err);
      });
    return discovered;
  };
}

/**
 * The codes (oauth4webapi's, carried by openid-client's ClientError) of a callback or an answer that
 * cannot complete this sign-in, however often it is retried: its parameters (iss, state, a repeated
 * or missing one, an implicit flow's tokens) or its ID token (nonce, iss, aud, times, signature key,
 * form) or userinfo's subject.
 */
const CALLBACK_REFUSED = new Set([
  'OAUTH_INVALID_RESPONSE',
  'OAUTH_JWT_CLAIM_COMPARISON_FAILED',
  'OAUTH_JWT_TIMESTAMP_CHECK_FAILED',
  'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED',
  'OAUTH_KEY_SELECTION_FAILED',
  'OAUTH_PARSE_ERROR',
  'OAUTH_UNSUPPORTED_OPERATION',
]);
/** Token endpoint errors about the portal's own client (its configuration), not about this sign-in. */
const CLIENT_REFUSED = new Set(['invalid_client', 'unauthorized_client']);

/**
 * What a failed code exchange is: the person's 400 portal.sign_in_failed when the provider refused
 * the callback's content (the code, an error it sent back) or openid-client refused it; otherwise (the
 * provider unreachable, a timeout, a 5xx, an answer that is not OAuth's, the portal's client refused)
 * a 503 whose cause the error middleware logs.
 */
export function callbackFailure(err: unknown): SignInFailedError | PortalUnavailableError {
  // The refusal's own words stay out of the message: the callback's error parameter is anyone's to write.
  if (err instanceof oidc.AuthorizationResponseError || (err instanceof oidc.ResponseBodyError && err.status < 500 && !CLIENT_REFUSED.has(err.error))) {
    return new SignInFailedError('the identity provider refused the sign-in', err);
  }
  if (err instanceof oidc.ClientError && err.code !== undefined && CALLBACK_REFUSED.has(err.code)) {
    return new SignInFailedError("the identity provider's answer does not complete this sign-in", err);
  }
  return new PortalUnavailableError(err);
}

/**
 * Sign-in (OIDC authorization code + PKCE), the session in front of every portal page and /api/portal
 * route, CSRF on every state-changing request, and sign-out (docs/portal.md).
 */
export function signInRoutes(deps: SignInDeps): { routes: Router; loadSession: Router } {
  const { signIn, store } = deps;
  const providerConfig = discoverer(signIn);
  const sessionCookie = sessionCookieName(signIn);
  const cookieBase = { httpOnly: true, secure: signIn.secureCookies, sameSite: 'lax' as const };
  const providerOrigin = new URL(signIn.issuer).origin;
  const signedOutUrl = new URL('/portal', signIn.redirectUrl).href;

  const loadSession = createRouter();
  loadSession.use(['/portal', '/api/portal'], async (req: Request, res: Response, next: NextFunction) => {
    res.set('Cache-Control', 'no-store');
    const cookie = cookieOf(req, sessionCookie);
    const session = cookie === undefined ? undefined : await store.touchSession(cookie, signIn.idleTimeoutMs);
    if (session) res.locals.portalSession = session;
    res.locals.providerOrigin = providerOrigin;
    // A deep link opened while signed out: sign in first, then back to that page (the callback's cookie).
    if (!session && req.method === 'GET' && !OPEN_PAGES.test(req.originalUrl.split('?')[0]!) && req.originalUrl.startsWith('/portal/')) {
      const back = returnPathOf(req.originalUrl);
      res.redirect(303, back ? `/portal/login?return=${encodeURIComponent(back)}` : '/portal/login');
      return;
    }
    if (!SAFE_METHODS.has(req.method)) {
      // Every state-changing request carries the session's CSRF token: a header (the pages' script)
      // or, for the plain sign-out form, a form field. SameSite=Lax is a second line, not the only one.
      if (!session) throw new SignInRequiredError();
      const presented = req.header('x-csrf-token') ?? (await formField(req, 'csrf_token'));
      if (!presented || !sameToken(presented, session.csrfToken)) throw new CsrfRefusedError();
    }
    next();
  });

  const routes = createRouter();
  routes.get('/portal/login', async (req, res) => {
    const config = await providerConfig();
    const state = randomToken();
    const nonce = randomToken();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    await store.beginSignIn(state, codeVerifier, nonce);
    const authorization = oidc.buildAuthorizationUrl(config, {
      redirect_uri: signIn.redirectUrl,
      scope: signIn.scopes,
      state,
      nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    });
    // The state is bound to this browser too: a callback carrying someone else's state is refused.
    res.cookie(LOGIN_COOKIE, state, { ...cookieBase, path: '/portal/callback', maxAge: SIGN_IN_VALIDITY_MS });
    const back = returnPathOf(req.query.return);
    if (back) res.cookie(RETURN_COOKIE, back, { ...cookieBase, path: '/portal/callback', maxAge: SIGN_IN_VALIDITY_MS });
    else res.clearCookie(RETURN_COOKIE, { ...cookieBase, path: '/portal/callback' });
    res.redirect(303, authorization.href);
  });

  routes.get('/portal/callback', async (req, res) => {
    const state = typeof req.query.state === 'string' ? req.query.state : '';
    const browserState = cookieOf(req, LOGIN_COOKIE);
    const back = returnPathOf(decodedCookie(cookieOf(req, RETURN_COOKIE)));
    res.clearCookie(LOGIN_COOKIE, { ...cookieBase, path: '/portal/callback' });
    res.clearCookie(RETURN_COOKIE, { ...cookieBase, path: '/portal/callback' });
    if (!state || !browserState || !sameToken(state, browserState)) throw new SignInFailedError('this browser did not start this sign-in');
    const pending = await store.takeSignIn(state);
    if (!pending) throw new SignInFailedError('the sign-in expired or was already used');
    const config = await providerConfig();
    const callbackUrl = new URL(signIn.redirectUrl);
    callbackUrl.search = new URL(req.originalUrl, 'http://portal.invalid').search;
    let claims: Record<string, unknown>;
    let idToken: string | undefined;
    try {
      const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      const idClaims = tokens.claims()!;
      idToken = tokens.id_token;
      const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, idClaims.sub);
      claims = { ...userinfo, ...idClaims };
    } catch (err) {
      throw callbackFailure(err);
    }
    const person = personOfClaims(claims, signIn.accessClaim);
    const { cookie } = await store.createSession(person, signIn.maxAgeMs);
    res.cookie(sessionCookie, cookie, { ...cookieBase, path: '/', maxAge: signIn.maxAgeMs });
    if (idToken && idToken.length <= ID_TOKEN_MAX_CHARS)
      res.cookie(ID_TOKEN_COOKIE, idToken, { ...cookieBase, path: '/portal/logout', maxAge: signIn.maxAgeMs });
    deps.logger.info({ subject: person.subject, roles: person.grants.map((g) => g.role) }, 'portal sign-in');
    res.redirect(303, back ?? '/portal');
  });

  routes.post('/portal/logout', async (req, res) => {
    const cookie = cookieOf(req, sessionCookie);
    if (cookie !== undefined) await store.endSession(cookie);
    res.clearCookie(sessionCookie, { ...cookieBase, path: '/' });
    const idToken = cookieOf(req, ID_TOKEN_COOKIE);
    res.clearCookie(ID_TOKEN_COOKIE, { ...cookieBase, path: '/portal/logout' });
    // RP-initiated logout: the provider's session ends too, where it advertises end_session_endpoint
    // (a provider that is down or has none leaves only the portal's session ended).
    const config = await providerConfig().catch(() => undefined);
    if (!config?.serverMetadata().end_session_endpoint) return res.redirect(303, '/portal');
    const ending = oidc.buildEndSessionUrl(config, {
      post_logout_redirect_uri: signedOutUrl,
      ...(idToken && idToken.length <= ID_TOKEN_MAX_CHARS ? { id_token_hint: idToken } : {}),
    });
    res.redirect(303, ending.href);
  });

  return { routes, loadSession };
}

function sameToken(presented: string, expected: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A field of a small urlencoded form body (the sign-out form); undefined for any other body. */
async function formField(req: Request, field: string): Promise<string | undefined> {
  if (!req.is('application/x-www-form-urlencoded')) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > 4096) return undefined;
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8')).get(field) ?? undefined;
}
