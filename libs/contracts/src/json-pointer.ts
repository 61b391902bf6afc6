/** RFC 6901: ~ and / inside a reference token are written ~0 and ~1. */
function escapeToken(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** A JSON Pointer below `base` (itself a pointer, '' for the document). */
export function jsonPointer(base: string, ...tokens: ReadonlyArray<string | number>): string {
  return base + tokens.map((token) => `/${escapeToken(String(token))}`).join('');
}
