const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;
const LARGEST_FIRST = Object.entries(UNIT_SECONDS).reverse();

/** What a duration flag accepts, for usage errors and help. */
export const DURATION_FORM = 'a whole number followed by s, m, h or d (e.g. 90s, 15m, 1h, 2d)';

/**
 * "90s", "15m", "1h", "2d" → seconds; undefined for anything else. One number and one unit only:
 * an operator typing "1h30m" or "1.5h" gets told the form rather than a guess at what was meant.
 */
export function durationSeconds(text: string): number | undefined {
  const match = /^(\d+)([smhd])$/.exec(text);
  if (!match) return undefined;
  const seconds = Number(match[1]) * UNIT_SECONDS[match[2] as keyof typeof UNIT_SECONDS];
  return Number.isSafeInteger(seconds) ? seconds : undefined;
}

/** Seconds → at most the two largest units ("45s", "15m 3s", "2h", "3d 4h"), for ages in tables. */
export function formatSeconds(total: number): string {
  let rest = Math.max(0, Math.floor(total));
  const parts: string[] = [];
  for (const [unit, size] of LARGEST_FIRST) {
    const count = Math.floor(rest / size);
    rest %= size;
    // The unit after the largest one counts as shown even when zero: "1d 0h 5m" must read "1d", not "1d 5m".
    if (parts.length > 0 || count > 0) parts.push(count > 0 ? `${count}${unit}` : '');
    if (parts.length === 2) break;
  }
  return parts.filter(Boolean).join(' ') || '0s';
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * A replay's start: a duration ago ("2h") or an RFC 3339 time, as the RFC 3339 UTC time the API
 * takes; undefined when it is neither. The calendar is checked by hand because Date rolls
 * 2026-02-30 over into March instead of refusing it.
 */
export function resolveSince(text: string, now: Date): string | undefined {
  const seconds = durationSeconds(text);
  if (seconds !== undefined) return new Date(now.getTime() - seconds * 1000).toISOString();
  const match = RFC3339.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 59) return undefined;
  return new Date(Date.parse(text.replace(' ', 'T'))).toISOString();
}
