// The form the timestamp $def of the SOM schemas allows; the schema's date-time format has already
// checked the calendar. Date.parse is not used: what it accepts beyond ISO 8601 differs between engines.
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:Z|([+-])(\d{2}):(\d{2}))$/;

/** Milliseconds since the epoch of a SOM timestamp, or NaN when the text is not one. */
export function epochMsOf(timestamp: string): number {
  const parts = TIMESTAMP.exec(timestamp);
  if (parts === null) return Number.NaN;
  const [, year, month, day, hour, minute, second, fraction, sign, offsetHours, offsetMinutes] = parts;
  // RFC 3339 allows a leap second (:60); it counts as the last millisecond of its minute.
  const leap = second === '60';
  const millis = leap ? 999 : Math.floor(Number(fraction ?? 0) * 1000);
  const utc = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), leap ? 59 : Number(second), millis);
  const offsetMs = (Number(offsetHours ?? 0) * 60 + Number(offsetMinutes ?? 0)) * 60_000;
  return sign === '-' ? utc + offsetMs : utc - offsetMs;
}
