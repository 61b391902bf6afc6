/** A dependency the service needs to do its work; /readyz runs every check of the process. */
export interface ReadinessCheck {
  name: string;
  check(): Promise<unknown>;
  /**
   * The process keeps serving without it (e.g. Redis: every limiter falls back to in-process
   * limits): a failure is reported as `degraded: …` and the process stays ready, so a load balancer
   * keeps sending it work.
   */
  optional?: boolean;
}

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, 'ok' | string>;
}

export async function runReadinessChecks(checks: readonly ReadinessCheck[], timeoutMs: number): Promise<ReadinessReport> {
  const results = await Promise.all(
    checks.map(async (c) => {
      try {
        await withTimeout(c.check(), timeoutMs);
        return { name: c.name, result: 'ok', blocking: false };
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        return c.optional ? { name: c.name, result: `degraded: ${reason}`, blocking: false } : { name: c.name, result: reason, blocking: true };
      }
    }),
  );
  return { ready: results.every((r) => !r.blocking), checks: Object.fromEntries(results.map((r) => [r.name, r.result])) };
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
