import { Writable } from 'node:stream';
import pino from 'pino';
import type { Kafka } from 'kafkajs';
import { createKafka, createProducer, groupMinSessionTimeoutMs } from './clients';

/** A pino logger at debug level whose lines land in `lines`, parsed. */
function capturingLogger(): { logger: pino.Logger; lines: Array<{ level: number; msg: string }> } {
  const lines: Array<{ level: number; msg: string }> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as { level: number; msg: string });
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, sink), lines };
}

const ERROR = 50;
const WARN = 40;
const DEBUG = 20;

describe('kafkajs log lines in the bus log', () => {
  it('creates the producer without the partitioner warning of kafkajs 2', () => {
    const { logger, lines } = capturingLogger();
    createProducer(createKafka({ brokers: ['127.0.0.1:9'], clientId: 'test', logger }));
    expect(lines.filter((l) => l.level >= WARN)).toEqual([]);
  });

  it('logs the group coordinator kafkajs retries on a fresh broker at debug, other error responses at error', () => {
    const { logger, lines } = capturingLogger();
    const kafkaLogger = createKafka({ brokers: ['127.0.0.1:9'], clientId: 'test', logger }).logger();
    kafkaLogger.error('Response GroupCoordinator(key: 10, version: 2)', { error: 'The group coordinator is not available', correlationId: 2 });
    kafkaLogger.error('Response Produce(key: 0, version: 7)', { error: 'The request timed out', correlationId: 3 });
    kafkaLogger.error('[Consumer] Crash: KafkaJSNumberOfRetriesExceeded: The group coordinator is not available', { groupId: 'g' });
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [DEBUG, 'Response GroupCoordinator(key: 10, version: 2)'],
      [ERROR, 'Response Produce(key: 0, version: 7)'],
      [ERROR, '[Consumer] Crash: KafkaJSNumberOfRetriesExceeded: The group coordinator is not available'],
    ]);
  });
});

describe("the broker's shortest session", () => {
  it('is unknown when the broker cannot be asked, and the cause is logged as a warning', async () => {
    const { logger, lines } = capturingLogger();
    const refusing = {
      admin: () => ({
        connect: () => Promise.reject(new Error('Not authorized to access cluster')),
        disconnect: () => Promise.resolve(),
      }),
    } as unknown as Kafka;
    await expect(groupMinSessionTimeoutMs(refusing, logger)).resolves.toBeUndefined();
    const warnings = lines.filter((l) => l.level === WARN) as Array<{ msg: string; err?: { message: string } }>;
    expect(warnings.map((w) => [w.msg, w.err?.message])).toEqual([
      ["the broker's group.min.session.timeout.ms could not be read; assuming Kafka's default", 'Not authorized to access cluster'],
    ]);
  });
});
