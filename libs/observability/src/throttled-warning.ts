import type { Logger } from './logger';

/** How often one throttled warning is written at most while its cause lasts. */
export const THROTTLED_WARNING_EVERY_MS = 10_000;

/**
 * A warning that something retried every second (or every scrape) keeps failing, written at most once
 * per `everyMs` however often it is raised: an outage of a dependency then costs a line every 10 s per
 * process, not one per attempt. Each line written carries `suppressed`, how many were raised and not
 * written since the line before it (0 on the first).
 */
export function throttledWarning(
  logger: Pick<Logger, 'warn'>,
  msg: string,
  opts: { everyMs?: number; now?: () => number } = {},
): (fields?: Record<string, unknown>) => void {
  const everyMs = opts.everyMs ?? THROTTLED_WARNING_EVERY_MS;
  const now = opts.now ?? Date.now;
  let lastAt: number | undefined;
  let suppressed = 0;
  return (fields = {}) => {
    const at = now();
    if (lastAt !== undefined && at - lastAt < everyMs) {
      suppressed += 1;
      return;
    }
    logger.warn({ ...fields, suppressed }, msg);
    lastAt = at;
    suppressed = 0;
  };
}
