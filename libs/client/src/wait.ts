/** Waits `ms`, or less when `signal` aborts (it then resolves, it does not throw). */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * How long a 429 or 503 asks the client to wait, in seconds: Retry-After (delta-seconds or an
 * HTTP date), or, without it, the longest reset time (`t`) of an exhausted item (`r=0`) of the IETF
 * RateLimit field (draft-ietf-httpapi-ratelimit-headers). Undefined when neither says.
 */
export function retryAfterSeconds(headers: Headers, now: Date = new Date()): number | undefined {
  const retryAfter = headers.get('retry-after')?.trim();
  if (retryAfter) {
    if (/^\d+$/.test(retryAfter)) return Number(retryAfter);
    const at = Date.parse(retryAfter);
    if (!Number.isNaN(at)) return Math.max(0, Math.ceil((at - now.getTime()) / 1000));
  }
  const rateLimit = headers.get('ratelimit');
  if (!rateLimit) return undefined;
  let longest: number | undefined;
  for (const item of rateLimit.split(',')) {
    const params = new Map(
      item
        .split(';')
        .slice(1)
        .map((p) => p.trim().split('=') as [string, string | undefined]),
    );
    const remaining = Number(params.get('r'));
    const reset = Number(params.get('t'));
    if (remaining === 0 && Number.isFinite(reset) && reset >= 0) longest = Math.max(longest ?? 0, reset);
  }
  return longest;
}
