import type { Request } from 'express';
import { OAuthError, type HttpError } from './errors';
import { ANSWER_VIOLATION_BOUNDS, boundViolations } from '@bus/contracts';

/**
 * How an app renders an HttpError. The bus routes answer with the refused shape of docs/api.md#publish-responses; the portal
 * routes (catalogue, admin) answer with a `code` (docs/api.md#skill-catalogue: "404 with code skills.version_unknown").
 * Token-route errors (OAuthError) are always RFC 6749 bodies: see `renderError`.
 */
export type ErrorRenderer = (err: HttpError, requestId: string) => unknown;

/** The bus host's refusal body: bounded however many violations were found (docs/errors.md). */
export const violationBody: ErrorRenderer = (err) => {
  const bounded = boundViolations(err.violations(), ANSWER_VIOLATION_BOUNDS);
  const violations = bounded.violations;
  const omitted = bounded.omitted + err.omittedViolations();
  return { accepted: false, violations, ...(omitted > 0 ? { violations_omitted: omitted } : {}) };
};

export const codeBody: ErrorRenderer = (err, requestId) => ({ ...err.details(), code: err.rule, message: err.message, request_id: requestId });

/**
 * The error answer of routes that answer in a format of their own, with the headers it needs: an HTML
 * page for a route people open in a browser (the portal's pages, with their Content-Security-Policy),
 * an XML document of another protocol (the SQS door's query protocol), or a JSON body of another
 * protocol (the SQS door's AWS JSON 1.0, its Content-Type in `headers`); undefined for any other
 * route, which keeps the host's JSON body. A service names it (Service.errorPage).
 */
export type ErrorPage = (
  req: Request,
  err: HttpError,
  requestId: string,
) => (({ html: string } | { xml: string } | { json: unknown }) & { headers: Record<string, string> }) | undefined;

/** The one place an error becomes a body: RFC 6749 for OAuthError, the host's shape otherwise. */
export function renderError(err: HttpError, requestId: string, hostRenderer: ErrorRenderer): unknown {
  if (err instanceof OAuthError) return { error: err.error, error_description: err.message };
  return hostRenderer(err, requestId);
}
