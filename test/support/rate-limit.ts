/**
 * The RateLimit field of an answer (draft-ietf-httpapi-ratelimit-headers-11), read as a client
 * library would: policy name → its `r` (requests left) and `t` (seconds until the window ends).
 * Strict on purpose: a field the bus formats differently fails the test that reads it.
 */
export type RateLimitLeft = Record<string, { r: number; t: number }>;

const ITEM = /^"([a-z]+)";r=(\d+);t=(\d+)$/;

export function rateLimitLeft(headers: Headers): RateLimitLeft {
  const field = headers.get('ratelimit');
  if (field === null) throw new Error('the answer has no RateLimit field');
  const left: RateLimitLeft = {};
  for (const item of field.split(', ')) {
    const match = ITEM.exec(item);
    if (!match) throw new Error(`RateLimit item ${JSON.stringify(item)} is not "name";r=<n>;t=<n>`);
    left[match[1]!] = { r: Number(match[2]), t: Number(match[3]) };
  }
  return left;
}
