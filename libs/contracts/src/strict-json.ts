import { jsonPointer } from './json-pointer';

/**
 * The bus's acceptance contract for a body (invariant F, docs/gateway.md "What the gateway reads"):
 * I-JSON (RFC 7493), so that every reader — the pull API, delivery, a consumer's JSON parser in any
 * language — reads the accepted bytes as the one value the gateway validated. JSON.parse alone is
 * not enough: it strips nothing but keeps the *last* of duplicate member names (other parsers keep
 * the first or refuse), turns integers beyond 2^53 into other numbers, keeps lone surrogates that
 * UTF-8 readers replace or refuse, and leaves nesting unbounded for recursive readers. Messages
 * (@bus/som, as schema.json_* rules) and every other JSON body the bus reads (@bus/http's request
 * bodies, the SQS door) are read by this one parse.
 */
export const MAX_JSON_DEPTH = 64;

/** Why a body is not I-JSON; @bus/som reports it as the rule `schema.<code>`. */
export interface IJsonProblem {
  code: 'json_bom' | 'json_invalid' | 'json_duplicate_name' | 'json_string_invalid' | 'json_too_deep' | 'json_number_unsafe';
  /** For people. */
  message: string;
  /** A JSON Pointer to where, when the text parsed. */
  path?: string;
}

export type IJsonParsed = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly problem: IJsonProblem };

// fatal: a body that is not UTF-8 is refused rather than read with replacement characters.
// ignoreBOM: a byte order mark is kept in the text and refused below, never silently dropped: the
// stored bytes would still carry it, and readers that do not drop it could not parse them.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A problem in one line, for an error answer: its message, and where when known. */
export function ijsonProblemText({ message, path }: IJsonProblem): string {
  return path ? `${message} (at ${path})` : message;
}

/** Parses a body (UTF-8 JSON text, no byte order mark) and checks it is I-JSON. */
export function parseIJson(body: Uint8Array): IJsonParsed {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) {
    return { ok: false, problem: { code: 'json_bom', message: 'The body starts with a UTF-8 byte order mark; JSON text must not (RFC 8259 §8.1)' } };
  }
  let text: string;
  try {
    text = UTF8.decode(body);
  } catch {
    return { ok: false, problem: { code: 'json_invalid', message: 'The body is not valid UTF-8' } };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const reason = err instanceof SyntaxError ? err.message : String(err);
    return { ok: false, problem: { code: 'json_invalid', message: `The body is not JSON: ${reason}` } };
  }
  // The usual body has no problem, which the quick check shows without the full check's bookkeeping.
  const problem = isPlainlyIJson(text, value) ? null : ijsonProblem(text);
  return problem ? { ok: false, problem } : { ok: true, value };
}

/**
 * True only when `text` (which JSON.parse read as `value`) has none of ijsonProblem's problems, shown
 * without remembering any member name: no duplicate names because the text has as many members (its
 * colons outside strings) as `value` has keys — JSON.parse keeps one of each duplicate, so any
 * duplicate leaves fewer keys than members — and no other problem on a scan that only counts depth
 * and checks numbers and escaped strings as ijsonProblem does. False means "look closely":
 * ijsonProblem then finds the first problem and where it is. parseIJson of the bench's 2 KB
 * story.context: 13.3–14.0 → 9.9–10.1 µs, and no Set or copy of each name per object
 * (docs/benchmarks.md, "What a publish computes").
 */
export function isPlainlyIJson(text: string, value: unknown): boolean {
  const strings = stringScanner(text);
  let members = 0;
  let depth = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = strings.end(i);
      if (end < 0 && loneSurrogateEscape(text.slice(i + 1, -end)) !== null) return false;
      i = (end < 0 ? -end : end) + 1;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth += 1;
      if (depth > MAX_JSON_DEPTH) return false;
      i += 1;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth -= 1;
      i += 1;
    } else if (c === COLON) {
      members += 1;
      i += 1;
    } else if (c === MINUS || (c >= 0x30 && c <= 0x39)) {
      const end = numberEnd(text, i);
      if (numberNeedsCheck(text, i, end) && unsafeNumber(text.slice(i, end)) !== null) return false;
      i = end;
    } else {
      i += 1;
    }
  }
  // Depth is at most MAX_JSON_DEPTH here, so counting the keys cannot exhaust the stack.
  return keyCount(value) === members;
}

/**
 * How many own keys the objects in a parsed JSON value have, all together. Own keys only (not for-in):
 * an enumerable property someone added to Object.prototype must not make up for a duplicate.
 */
function keyCount(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  let count = 0;
  if (Array.isArray(value)) {
    for (const item of value) count += keyCount(item);
    return count;
  }
  const keys = Object.keys(value);
  count = keys.length;
  for (const key of keys) count += keyCount((value as Record<string, unknown>)[key]);
  return count;
}

/** ±(2^53 − 1): integers beyond it are read differently by parsers that keep integers exact. */
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

const QUOTE = 0x22;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;

interface Frame {
  /** Member names seen so far (objects only). */
  readonly names: Set<string> | null;
  /** The current member name or array index, for the path of what is inside. */
  key: string | number;
  expectingName: boolean;
}

/**
 * Checks text that JSON.parse has already accepted against the rules JSON.parse does not apply.
 * Returns the first problem found (the body is refused as a whole), or null. One pass, no
 * recursion: the depth of the input cannot exhaust the stack. Paths are built only for a problem
 * (from the stack's keys: a container's own key does not change while something inside it is read),
 * and only member names and escaped strings are copied out of the text: it runs on every publish.
 */
export function ijsonProblem(text: string): IJsonProblem | null {
  const stack: Frame[] = [];
  /** The path of the value being read (`depth` = stack.length), or of an enclosing container. */
  const pathAt = (depth: number, ...below: string[]): string => jsonPointer('', ...stack.slice(0, depth).map((frame) => frame.key), ...below);
  const strings = stringScanner(text);
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = strings.end(i);
      const escaped = end < 0;
      const close = escaped ? -end : end;
      const top = stack.at(-1);
      const isName = top !== undefined && top.names !== null && top.expectingName;
      if (escaped) {
        const lone = loneSurrogateEscape(text.slice(i + 1, close));
        if (lone) {
          const at = isName ? pathAt(stack.length - 1) : pathAt(stack.length);
          return { code: 'json_string_invalid', message: `A string holds the lone surrogate \\u${lone}, which UTF-8 readers replace or refuse`, path: at };
        }
      }
      if (isName) {
        const raw = text.slice(i + 1, close);
        const name = escaped ? (JSON.parse(`"${raw}"`) as string) : raw;
        if (top.names!.has(name)) {
          return {
            code: 'json_duplicate_name',
            message: `The member name ${JSON.stringify(name.slice(0, 64))} appears twice in one object; readers disagree on which value counts`,
            path: pathAt(stack.length - 1, name),
          };
        }
        top.names!.add(name);
        top.key = name;
        top.expectingName = false;
      }
      i = close + 1;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (stack.length >= MAX_JSON_DEPTH) {
        return { code: 'json_too_deep', message: `Objects and arrays are nested more than ${MAX_JSON_DEPTH} levels deep`, path: pathAt(stack.length) };
      }
      stack.push({ names: c === OPEN_OBJECT ? new Set() : null, key: 0, expectingName: c === OPEN_OBJECT });
      i += 1;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      stack.pop();
      i += 1;
    } else if (c === COMMA) {
      const top = stack.at(-1)!;
      if (top.names === null) top.key = (top.key as number) + 1;
      else top.expectingName = true;
      i += 1;
    } else if (c === MINUS || (c >= 0x30 && c <= 0x39)) {
      const end = numberEnd(text, i);
      if (numberNeedsCheck(text, i, end)) {
        const problem = unsafeNumber(text.slice(i, end));
        if (problem) return { code: 'json_number_unsafe', message: problem, path: pathAt(stack.length) };
      }
      i = end;
    } else {
      // Whitespace, ':' and the literals true, false and null.
      i += 1;
    }
  }
  return null;
}

/**
 * `end(start)`: the index of the quote that closes the string opening at `start` (the text is valid
 * JSON), negated when the string holds an escape. Found with indexOf, which scans natively, rather
 * than a character at a time (the strings are most of a message's text: the full check of the bench's
 * 2 KB story.context 9.0 → 6.7 µs, docs/benchmarks.md, "What a publish computes"); the next backslash is looked up again
 * only once the scan has passed it, so each character is read a bounded number of times.
 */
function stringScanner(text: string): { end(start: number): number } {
  let nextBackslash = text.indexOf('\\');
  return {
    end: (start) => {
      let escaped = false;
      let i = start + 1;
      for (;;) {
        if (nextBackslash !== -1 && nextBackslash < i) nextBackslash = text.indexOf('\\', i);
        const quote = text.indexOf('"', i);
        if (nextBackslash === -1 || quote < nextBackslash) return escaped ? -quote : quote;
        // The backslash and the character it escapes (a quote, a backslash, or the u of \uXXXX).
        escaped = true;
        i = nextBackslash + 2;
      }
    },
  };
}

/** The hex of the first \u escape that is a surrogate without its partner, or null. */
function loneSurrogateEscape(raw: string): string | null {
  const escapes = /\\(u([0-9a-fA-F]{4})|.)/g;
  let pendingHigh: string | null = null;
  let expectLowAt = -1;
  for (let m = escapes.exec(raw); m !== null; m = escapes.exec(raw)) {
    const hex = m[2];
    const unit = hex === undefined ? -1 : parseInt(hex, 16);
    const isLow = unit >= 0xdc00 && unit <= 0xdfff;
    if (pendingHigh !== null) {
      if (m.index !== expectLowAt || !isLow) return pendingHigh;
      pendingHigh = null;
      continue;
    }
    if (unit >= 0xd800 && unit <= 0xdbff) {
      pendingHigh = hex!;
      expectLowAt = m.index + m[0].length;
    } else if (isLow) {
      return hex!;
    }
  }
  return pendingHigh;
}

/** The index just past the number starting at `start`. */
function numberEnd(text: string, start: number): number {
  let end = start + 1;
  while (end < text.length && isNumberChar(text.charCodeAt(end))) end += 1;
  return end;
}

/** An integer of at most 15 digits is within ±(2^53 − 1) and finite: only other numbers are checked. */
function numberNeedsCheck(text: string, start: number, end: number): boolean {
  if (end - start > 15) return true;
  for (let i = start; i < end; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 0x2e || c === 0x65 || c === 0x45) return true;
  }
  return false;
}

function isNumberChar(c: number): boolean {
  // digits . e E + -
  return (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === MINUS;
}

function unsafeNumber(token: string): string | null {
  const integer = !/[.eE]/.test(token);
  // Beyond 15 digits an integer may pass 2^53; BigInt says exactly (the token is a JSON integer).
  if (integer && token.replace('-', '').length > 15) {
    const value = BigInt(token);
    if (value > MAX_SAFE || value < -MAX_SAFE) {
      return `The integer ${token.slice(0, 40)} is beyond ±(2^53 − 1): readers that keep integers exact and readers that use doubles read different numbers`;
    }
  }
  if (!Number.isFinite(Number(token))) return `The number ${token.slice(0, 40)} is too large for a double: readers read infinity, null or an error`;
  return null;
}
