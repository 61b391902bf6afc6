import { base64Key, ConfigError, databaseConfig, duration, hostPorts, int, kafkaConfig, loadConfig, oneOf, optional, port, str, url } from './index';

function problemsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map((p) => p.variable);
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('returns typed values and applies defaults', () => {
    const config = loadConfig(
      { PORT: port({ default: 8080 }), NAME: str(), WAIT: duration({ default: 1000 }), MODE: oneOf(['a', 'b'] as const) },
      { NAME: 'bus', MODE: 'b', WAIT: '2m' },
    );
    expect(config).toEqual({ PORT: 8080, NAME: 'bus', WAIT: 120_000, MODE: 'b' });
  });

  it('names every bad variable in one error, not just the first', () => {
    const spec = { ...databaseConfig, ...kafkaConfig, PORT: port() };
    const env = { DATABASE_URL: 'mysql://x', KAFKA_BROKERS: 'no-port', PORT: '70000', KAFKA_REPLICATION_FACTOR: 'three' };
    expect(problemsOf(() => loadConfig(spec, env)).sort()).toEqual(['DATABASE_URL', 'KAFKA_BROKERS', 'KAFKA_REPLICATION_FACTOR', 'PORT'].sort());
  });

  it('puts each variable name and its problem in the message', () => {
    expect(() => loadConfig({ PORT: port(), DATABASE_URL: url({ protocols: ['postgres:'] }) }, { PORT: 'abc' })).toThrow(
      /PORT: must be an integer from 1 to 65535, got "abc"[\s\S]*DATABASE_URL: is required/,
    );
  });

  it('never echoes a URL value, which may carry a password', () => {
    expect(() => loadConfig(databaseConfig, { DATABASE_URL: 'mysql://user:s3cret@db/x' })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('s3cret') }),
    );
  });

  it('treats a blank value as unset', () => {
    expect(problemsOf(() => loadConfig({ NAME: str() }, { NAME: '   ' }))).toEqual(['NAME']);
    expect(loadConfig({ N: int({ default: 3 }) }, { N: '' })).toEqual({ N: 3 });
  });

  it('reads optional variables as undefined when unset', () => {
    expect(loadConfig({ X: optional(url({ protocols: ['http:'] })) }, {})).toEqual({ X: undefined });
    expect(problemsOf(() => loadConfig({ X: optional(url({ protocols: ['http:'] })) }, { X: 'ftp://a' }))).toEqual(['X']);
  });

  it.each([
    ['10.0.0.1:9092,kafka-2:9092', ['10.0.0.1:9092', 'kafka-2:9092']],
    ['127.0.0.1:59092', ['127.0.0.1:59092']],
  ])('parses broker list %s', (raw, expected) => {
    expect(loadConfig({ B: hostPorts() }, { B: raw }).B).toEqual(expected);
  });

  it.each(['1.5s', '10', 'ten minutes', '-1s'])('refuses duration %s', (raw) => {
    expect(problemsOf(() => loadConfig({ D: duration() }, { D: raw }))).toEqual(['D']);
  });

  it('enforces duration bounds and names them', () => {
    const spec = { TTL: duration({ default: 10_000, min: 1000, max: 30_000 }) };
    expect(loadConfig(spec, { TTL: '30s' })).toEqual({ TTL: 30_000 });
    expect(loadConfig(spec, {})).toEqual({ TTL: 10_000 });
    expect(() => loadConfig(spec, { TTL: '31s' })).toThrow('TTL: must be at least 1s and at most 30s, got "31s"');
    expect(() => loadConfig(spec, { TTL: '500ms' })).toThrow(/TTL: must be at least 1s and at most 30s/);
  });

  it('enforces integer bounds', () => {
    expect(problemsOf(() => loadConfig({ N: int({ min: 1, max: 5 }) }, { N: '6' }))).toEqual(['N']);
    expect(problemsOf(() => loadConfig({ N: int({ min: 1, max: 5 }) }, { N: '2.5' }))).toEqual(['N']);
    expect(loadConfig({ N: int({ min: 1, max: 5 }) }, { N: '5' })).toEqual({ N: 5 });
  });
});

describe('base64Key', () => {
  const key = (bytes: number) => Buffer.alloc(bytes, 7).toString('base64');

  it('takes exactly its bytes, or at least them with atLeast', () => {
    expect(loadConfig({ K: base64Key(32) }, { K: key(32) }).K).toHaveLength(32);
    expect(problemsOf(() => loadConfig({ K: base64Key(32) }, { K: key(48) }))).toEqual(['K']);
    expect(loadConfig({ K: base64Key(32, { atLeast: true }) }, { K: key(48) }).K).toHaveLength(48);
    expect(problemsOf(() => loadConfig({ K: base64Key(32, { atLeast: true }) }, { K: key(31) }))).toEqual(['K']);
    expect(problemsOf(() => loadConfig({ K: base64Key(32) }, {}))).toEqual(['K']);
  });

  it('never echoes the value, which is a secret', () => {
    const secret = key(16);
    expect(() => loadConfig({ K: base64Key(32) }, { K: secret })).toThrow(/K: must be base64 of 32 random bytes/);
    expect(() => loadConfig({ K: base64Key(32) }, { K: secret })).not.toThrow(secret);
  });
});
