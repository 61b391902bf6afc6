/**
 * Why a stored message cannot be shown as an envelope (docs/delivery.md, "Messages the pull API cannot
 * render"). Stable codes: consumers may branch on them.
 * - `utf8.invalid`: the bytes are not well-formed UTF-8 (JSON text is UTF-8, RFC 8259 §8.1);
 * - `json.invalid`: not JSON text, e.g. a UTF-8 BOM before it or bytes after it;
 * - `json.not_object`: JSON, but not an object;
 * - `json.too_deep`: nested deeper than MAX_ENVELOPE_DEPTH, which a response could not carry.
 */
export type UnrenderableReason = 'utf8.invalid' | 'json.invalid' | 'json.not_object' | 'json.too_deep';

export const UNRENDERABLE_REASONS: readonly UnrenderableReason[] = ['utf8.invalid', 'json.invalid', 'json.not_object', 'json.too_deep'];

/**
 * The deepest envelope a receive renders. Serialising the answer recurses once per level and ran out
 * of stack at about 5,000 levels (Node 24), which made the whole receive a 500; this bound keeps a wide
 * margin below that and lies far above the nesting the gateway accepts (libs/som's strict parse), so
 * every message it accepts renders.
 */
export const MAX_ENVELOPE_DEPTH = 1000;

export type RenderedEnvelope = { ok: true; envelope: Record<string, unknown> } | { ok: false; reason: UnrenderableReason };

// fatal: malformed UTF-8 is an error, not U+FFFD (the envelope would then differ from the bytes);
// ignoreBOM: a BOM is kept in the text, so JSON.parse refuses it as it refuses any text before the JSON.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The producer's stored bytes as the envelope a receive answers, or why they cannot be one. */
export function renderEnvelope(body: Uint8Array): RenderedEnvelope {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    return { ok: false, reason: 'utf8.invalid' };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'json.invalid' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { ok: false, reason: 'json.not_object' };
  // Deeper than the bound takes more brackets than a shorter text has: only a long one is walked.
  if (text.length > 2 * MAX_ENVELOPE_DEPTH && nestedDeeperThan(value, MAX_ENVELOPE_DEPTH)) return { ok: false, reason: 'json.too_deep' };
  return { ok: true, envelope: value as Record<string, unknown> };
}

/** Whether objects and arrays nest more than `limit` levels (the value itself is level 1), without recursing. */
function nestedDeeperThan(value: object, limit: number): boolean {
  const pending: Array<{ node: object; depth: number }> = [{ node: value, depth: 1 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (next.depth > limit) return true;
    for (const child of Object.values(next.node)) if (child !== null && typeof child === 'object') pending.push({ node: child, depth: next.depth + 1 });
  }
  return false;
}
