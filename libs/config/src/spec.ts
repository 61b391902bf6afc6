/**
 * Typed environment variables. A config spec is an object of named readers; `loadConfig` runs every
 * reader, collects every problem and throws one ConfigError naming each bad variable, so an operator
 * fixes a broken deployment in one round instead of one variable per restart.
 */

export type Env = Readonly<Record<string, string | undefined>>;

/** Reads one variable. Returns the parsed value or throws a plain message (without the name). */
export interface VarReader<T> {
  readonly describe: string;
  read(raw: string | undefined): T;
}

export type ConfigSpec = Record<string, VarReader<unknown>>;
export type ConfigOf<S extends ConfigSpec> = { readonly [K in keyof S]: S[K] extends VarReader<infer T> ? T : never };

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: ReadonlyArray<{ variable: string; problem: string }>) {
    super(`Invalid configuration:\n${problems.map((p) => `  ${p.variable}: ${p.problem}`).join('\n')}`);
  }
}

export function loadConfig<S extends ConfigSpec>(spec: S, env: Env = process.env): ConfigOf<S> {
  const problems: Array<{ variable: string; problem: string }> = [];
  const out: Record<string, unknown> = {};
  for (const [variable, reader] of Object.entries(spec)) {
    try {
      out[variable] = reader.read(blankToUndefined(env[variable]));
    } catch (err) {
      problems.push({ variable, problem: err instanceof Error ? err.message : String(err) });
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return out as ConfigOf<S>;
}

function blankToUndefined(raw: string | undefined): string | undefined {
  return raw === undefined || raw.trim() === '' ? undefined : raw.trim();
}

type Options<T> = { default?: T };

function reader<T>(describe: string, parse: (raw: string) => T, opts: Options<T>): VarReader<T> {
  return {
    describe,
    read(raw) {
      if (raw === undefined) {
        if (opts.default !== undefined) return opts.default;
        throw new Error(`is required (${describe})`);
      }
      return parse(raw);
    },
  };
}

/** An optional variable: undefined when unset, otherwise parsed by the inner reader. */
export function optional<T>(inner: VarReader<T>): VarReader<T | undefined> {
  return {
    describe: `${inner.describe}, optional`,
    read: (raw) => (raw === undefined ? undefined : inner.read(raw)),
  };
}

export function str(opts: Options<string> & { pattern?: RegExp; minLength?: number } = {}): VarReader<string> {
  const describe = opts.pattern ? `a string matching ${opts.pattern}` : 'a string';
  return reader(
    describe,
    (raw) => {
      if (opts.pattern && !opts.pattern.test(raw)) throw new Error(`must be ${describe}`);
      if (opts.minLength !== undefined && raw.length < opts.minLength) {
        throw new Error(`must be at least ${opts.minLength} characters long`);
      }
      return raw;
    },
    opts,
  );
}

export function int(opts: Options<number> & { min?: number; max?: number } = {}): VarReader<number> {
  const min = opts.min ?? Number.MIN_SAFE_INTEGER;
  const max = opts.max ?? Number.MAX_SAFE_INTEGER;
  const describe = `an integer from ${min} to ${max}`;
  return reader(
    describe,
    (raw) => {
      const n = Number(raw);
      if (!/^-?\d+$/.test(raw) || !Number.isSafeInteger(n) || n < min || n > max) {
        throw new Error(`must be ${describe}, got "${raw}"`);
      }
      return n;
    },
    opts,
  );
}

export function port(opts: Options<number> = {}): VarReader<number> {
  return int({ ...opts, min: 1, max: 65535 });
}

export function bool(opts: Options<boolean> = {}): VarReader<boolean> {
  return reader(
    'true or false',
    (raw) => {
      if (/^(true|1|yes)$/i.test(raw)) return true;
      if (/^(false|0|no)$/i.test(raw)) return false;
      throw new Error(`must be true or false, got "${raw}"`);
    },
    opts,
  );
}

export function oneOf<const T extends string>(values: readonly T[], opts: Options<T> = {}): VarReader<T> {
  const describe = `one of ${values.join(', ')}`;
  return reader(
    describe,
    (raw) => {
      if (!(values as readonly string[]).includes(raw)) throw new Error(`must be ${describe}, got "${raw}"`);
      return raw as T;
    },
    opts,
  );
}

/** A URL with one of the given protocols. Never echoes the value: URLs can carry passwords. */
export function url(opts: Options<string> & { protocols: readonly string[] }): VarReader<string> {
  const describe = `a ${opts.protocols.map((p) => p.replace(/:$/, '')).join(' or ')} URL`;
  return reader(
    describe,
    (raw) => {
      let parsed: URL;
      try {
        parsed = new URL(raw);
      } catch {
        throw new Error(`must be ${describe}`);
      }
      if (!opts.protocols.includes(parsed.protocol)) throw new Error(`must be ${describe}`);
      return raw;
    },
    opts,
  );
}

/** Comma-separated host:port list, e.g. KAFKA_BROKERS=10.0.0.1:9092,10.0.0.2:9092. */
export function hostPorts(opts: Options<string[]> = {}): VarReader<string[]> {
  const describe = 'a comma-separated list of host:port';
  return reader(
    describe,
    (raw) => {
      const items = raw
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0);
      const bad = items.filter((s) => !/^[A-Za-z0-9.\-_[\]:]+:\d{1,5}$/.test(s));
      if (items.length === 0 || bad.length > 0) throw new Error(`must be ${describe}, got "${raw}"`);
      return items;
    },
    opts,
  );
}

/** A duration such as 500ms, 30s, 5m, 2h, 7d; returned in milliseconds, within `min`/`max` when given. */
export function duration(opts: Options<number> & { min?: number; max?: number } = {}): VarReader<number> {
  const bounds = [
    opts.min !== undefined ? `at least ${formatDuration(opts.min)}` : '',
    opts.max !== undefined ? `at most ${formatDuration(opts.max)}` : '',
  ].filter((b) => b !== '');
  const describe = ['a duration like 500ms, 30s, 5m, 2h or 7d', ...bounds].join(', ');
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  return reader(
    describe,
    (raw) => {
      const m = /^(\d+)(ms|s|m|h|d)$/.exec(raw);
      if (!m) throw new Error(`must be ${describe}, got "${raw}"`);
      const ms = Number(m[1]) * (units[m[2] as string] as number);
      if ((opts.min !== undefined && ms < opts.min) || (opts.max !== undefined && ms > opts.max)) {
        throw new Error(`must be ${bounds.join(' and ')}, got "${raw}"`);
      }
      return ms;
    },
    opts,
  );
}

/**
 * A secret key given in base64: exactly `bytes` bytes, or at least that many with `atLeast`. Required,
 * and never echoed in an error: it is a secret.
 */
export function base64Key(bytes: number, opts: { atLeast?: boolean } = {}): VarReader<Buffer> {
  const describe = `base64 of ${opts.atLeast ? 'at least ' : ''}${bytes} random bytes (e.g. \`openssl rand -base64 ${bytes}\`)`;
  return {
    describe,
    read: (raw) => {
      if (raw === undefined) throw new Error(`is required (${describe})`);
      const value = /^[A-Za-z0-9+/]+={0,2}$/.test(raw) ? Buffer.from(raw, 'base64') : Buffer.alloc(0);
      if (opts.atLeast ? value.length < bytes : value.length !== bytes) throw new Error(`must be ${describe}`);
      return value;
    },
  };
}

/** The largest whole unit: 30000 → 30s, 7200000 → 2h. */
function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
