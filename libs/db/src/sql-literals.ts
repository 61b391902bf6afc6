import { escapeIdentifier, escapeLiteral } from 'pg';

/** What a literal cannot hold as it is: a quote or a backslash (escaped), a NUL (refused). */
// eslint-disable-next-line no-control-regex -- the NUL is what it looks for
const NOT_PLAIN = /['\\\u0000]/;

/**
 * A quoted SQL literal, for the statements of a simple query, which carries no parameters (several
 * statements in one round trip). pg's escapeLiteral doubles quotes and backslashes; a NUL, which no
 * Postgres text value can hold, is refused here rather than cutting the query short on the wire. A
 * value with none of them — every id the gateway quotes — is quoted as it is: escapeLiteral builds its
 * answer a character at a time, which was 7 % of what the gateway allocated at 64 publishes in flight
 * (docs/benchmarks.md, "What a publish allocates").
 */
export function sqlLiteral(value: string): string {
  if (!NOT_PLAIN.test(value)) return `'${value}'`;
  if (value.includes('\u0000')) throw new RangeError('a NUL character cannot be part of a Postgres text value');
  return escapeLiteral(value);
}

/** A text[] of quoted literals (an empty one too: `array[]::text[]`). */
export function sqlTextArray(values: readonly string[]): string {
  return `array[${values.map(sqlLiteral).join(', ')}]::text[]`;
}

/** A quoted SQL identifier (a prepared statement's name in DEALLOCATE): pg's escapeIdentifier doubles quotes. */
export function sqlIdentifier(name: string): string {
  if (name.includes('\u0000')) throw new RangeError('a NUL character cannot be part of a Postgres identifier');
  return escapeIdentifier(name);
}
