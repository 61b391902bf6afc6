import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startNodeProcess } from '@bus/testing';

describe('start-up configuration', () => {
  it('stops a service with exit code 2 and a message naming every bad variable', async () => {
    const proc = startNodeProcess('services/gateway/dist/main.js', {
      PORT: 'eighty',
      DATABASE_URL: 'mysql://user:pw-marker@db/bus',
      KAFKA_BROKERS: 'kafka-without-port',
      LOG_LEVEL: 'loud',
      // REDIS_URL is missing altogether.
    });
    expect(await proc.exited).toBe(2);
    const out = proc.output();
    expect(out).toContain('gateway: Invalid configuration:');
    for (const line of [
      'PORT: must be an integer from 1 to 65535, got "eighty"',
      'DATABASE_URL: must be a postgres or postgresql URL',
      'REDIS_URL: is required (a redis or rediss URL)',
      'KAFKA_BROKERS: must be a comma-separated list of host:port, got "kafka-without-port"',
      'LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
    ]) {
      expect(out).toContain(line);
    }
    expect(out).not.toContain('pw-marker');
  });

  it('stops the standalone pull API on a missing or short RECEIPT_HANDLE_KEY without echoing it', async () => {
    const base = {
      DATABASE_URL: 'postgres://bus@db/bus',
      REDIS_URL: 'redis://redis:6379',
      KAFKA_BROKERS: 'kafka:9092',
      BUS_BASE_URL: 'https://bus.example.com',
    };
    const missing = startNodeProcess('services/pull-api/dist/main.js', base);
    expect(await missing.exited).toBe(2);
    expect(missing.output()).toContain('pull-api: Invalid configuration:');
    expect(missing.output()).toContain('RECEIPT_HANDLE_KEY: is required');
    const short = startNodeProcess('services/pull-api/dist/main.js', { ...base, RECEIPT_HANDLE_KEY: 'c2hvcnRrZXltYXJrZXI=' });
    expect(await short.exited).toBe(2);
    expect(short.output()).toContain('RECEIPT_HANDLE_KEY: must be base64 of at least 32 random bytes');
    expect(short.output()).not.toContain('c2hvcnRrZXltYXJrZXI');
  });

  it('stops delivery on a retention window below its minimum, naming the variable', async () => {
    const proc = startNodeProcess('services/delivery/dist/main.js', {
      DATABASE_URL: 'postgres://bus@db/bus',
      KAFKA_BROKERS: 'kafka:9092',
      IDEMPOTENCY_RETENTION: '6d',
      QUEUE_RETENTION: '13d',
    });
    expect(await proc.exited).toBe(2);
    expect(proc.output()).toContain('IDEMPOTENCY_RETENTION: must be at least 7d, got "6d"');
    expect(proc.output()).toContain('QUEUE_RETENTION: must be at least 14d, got "13d"');
  });

  it('stops the gateway on a bad managed-apps file, naming the variable, the entry and the field', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'managed-apps-')), 'apps.yaml');
    writeFileSync(
      file,
      'apps:\n  - name: feed\n    workspace_id: wabcdefghijk2\n    app_id: aabcdefghijk2\n    connection_id: cabcdefghijk2\n' +
        '    token_issuer: { issuer: "https://login.example.com/", jwks_url: "http://login.example.com/jwks", audience: bus, client_id: feed, algorithms: [HS256] }\n',
    );
    const proc = startNodeProcess('services/gateway/dist/main.js', {
      DATABASE_URL: 'postgres://bus@db/bus',
      REDIS_URL: 'redis://redis:6379',
      KAFKA_BROKERS: 'kafka:9092',
      BUS_BASE_URL: 'https://bus.example.com',
      // The variables are checked before the file: they must pass (the key since SigV4 landed).
      SIGNING_KEY_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
      MANAGED_APPS_FILE: file,
    });
    expect(await proc.exited).toBe(2);
    expect(proc.output()).toContain('MANAGED_APPS_FILE: apps[0] (feed): token_issuer: jwks_url must be https');
    expect(proc.output()).toContain('apps[0] (feed): token_issuer: algorithms: HS256 not allowed');
  });

  it('names the variables of each service: the all-in-one process reads its two ports', async () => {
    const proc = startNodeProcess('services/all-in-one/dist/main.js', { BUS_PORT: '0x50', PORTAL_PORT: '99999' });
    expect(await proc.exited).toBe(2);
    expect(proc.output()).toMatch(/BUS_PORT: must be an integer[\s\S]*PORTAL_PORT: must be an integer[\s\S]*DATABASE_URL: is required/);
  });
});
