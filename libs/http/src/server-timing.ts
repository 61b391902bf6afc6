import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * The steps a request went through and how long each took, for the `Server-Timing` answer header
 * (W3C Server Timing) and the bus_request_step_seconds histogram. Steps are recorded in order by
 * `mark`: each lasts from the previous mark (or the request's start) to this one, so the steps of a
 * request add up to its total.
 */
export class RequestTimings {
  private readonly started = process.hrtime.bigint();
  private last = this.started;
  private readonly steps: Array<{ name: string; ms: number }> = [];

  /** Ends step `name` now. A step marked twice (a retried stage) adds up. */
  mark(name: string): void {
    const now = process.hrtime.bigint();
    const ms = Number(now - this.last) / 1e6;
    this.last = now;
    const existing = this.steps.find((s) => s.name === name);
    if (existing) existing.ms += ms;
    else this.steps.push({ name, ms });
  }

  /** Milliseconds since the request started. */
  totalMs(): number {
    return Number(process.hrtime.bigint() - this.started) / 1e6;
  }

  recorded(): ReadonlyArray<{ name: string; ms: number }> {
    return this.steps;
  }

  /** The header value: each step and `total`, durations in milliseconds with 0.01 ms resolution. */
  header(): string {
    return [...this.steps, { name: 'total', ms: this.totalMs() }].map((s) => `${s.name};dur=${s.ms.toFixed(2)}`).join(', ');
  }
}

/** The request's timings (createHttpApp starts them for every request). */
export function requestTimings(res: Response): RequestTimings {
  let timings = res.locals.timings as RequestTimings | undefined;
  if (!timings) {
    timings = new RequestTimings();
    res.locals.timings = timings;
  }
  return timings;
}

/** Middleware that ends step `name` when the request reaches it (after the middleware the step names). */
export function markStep(name: string): RequestHandler {
  return (_req: Request, res: Response, next: NextFunction) => {
    requestTimings(res).mark(name);
    next();
  };
}

/**
 * Sets `Server-Timing` on the answer just before its headers go out, whoever writes them (a route,
 * the error middleware, a 304 from express): the one place every answer passes.
 */
export function sendServerTiming(res: Response): void {
  const writeHead = res.writeHead;
  res.writeHead = function writeHeadWithTiming(this: Response, ...args: unknown[]) {
    if (!this.headersSent) this.setHeader('Server-Timing', requestTimings(this).header());
    return (writeHead as (...a: unknown[]) => Response).apply(this, args);
  } as typeof res.writeHead;
}
