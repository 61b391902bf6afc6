import { escapeIdentifier, escapeLiteral } from 'pg';

/**
 * A quoted SQL literal, for the statements of a simple query, which carries no parameters (several
 * statements in one round trip). pg's escapeLiteral doubles quotes and backslashes; a NUL, which no
 * Postgres text value can hold, is refused here rather than cutting the query short on the wire.
 */
export function sqlLiteral(value: string): string {
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
