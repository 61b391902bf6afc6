import type { HttpError } from './errors';

/**
 * How an app renders an HttpError. The bus routes answer with spec 2.7's refused shape; the portal
 * routes (catalogue, admin) answer with a `code` (spec 4.3: "404 with code skills.version_unknown").
 * The token route adds its own RFC 6749 renderer with the token service.
 */
export type ErrorRenderer = (err: HttpError, requestId: string) => unknown;

export const violationBody: ErrorRenderer = (err) => ({ accepted: false, violations: err.violations() });

export const codeBody: ErrorRenderer = (err, requestId) => ({ code: err.rule, message: err.message, request_id: requestId });
