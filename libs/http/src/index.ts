export { createHttpApp, createRequestMetrics } from './app';
export type { HttpApp, HttpAppOptions, RequestMetrics } from './app';
export { serve, onShutdownSignal, REQUEST_TIMEOUTS } from './server';
export type { RunningServer, RequestTimeouts, ServeOptions } from './server';
export { readBody } from './body';
export { readBasicAuthorization } from './basic-auth';
export type { BasicAuthorization } from './basic-auth';
export { cacheableJson, DOCUMENT_CACHE_CONTROL, sendCacheable } from './cacheable';
export type { CacheableJson } from './cacheable';
export { runReadinessChecks } from './readiness';
export type { ReadinessCheck, ReadinessReport } from './readiness';
export { violationBody, codeBody, renderError } from './error-bodies';
export type { ErrorPage, ErrorRenderer } from './error-bodies';
export {
  HttpError,
  RouteNotFoundError,
  MethodNotAllowedError,
  MalformedRequestError,
  ContentEncodingUnsupportedError,
  ExpectationFailedError,
  RequestHeadersTooLargeError,
  RequestTimeoutError,
  MessageTooLargeError,
  RequestInvalidError,
  ResourceUnknownError,
  InternalError,
  DependencyUnavailableError,
  unavailableUnlessDone,
  unavailableOnAnyFailure,
  OAuthError,
  ViolationsError,
} from './errors';
export type { Violation, ViolationSource, OAuthErrorCode } from './errors';
export { runProcess, runMain } from './service';
export type { Service, Listener, ProcessOptions, RunningProcess } from './service';
export { bootstrap } from './bootstrap';
export type { CompositionContext, Composition } from './bootstrap';
export { requestFirewall, isAttackPattern, RequestBlockedError } from './firewall';
export { compileOpenApiRequests, requestValidation, validatedQuery } from './openapi-requests';
export type { CheckResult, CompiledOperation, OpenApiRequestDocument, OpenApiRequests, RequestValidation } from './openapi-requests';
export { markStep, requestTimings, RequestTimings } from './server-timing';
export { routeMatcher } from './route-matcher';
export { createRouter } from './router';
export type { RouteKey } from './route-matcher';
