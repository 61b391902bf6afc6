import { Writable } from 'node:stream';
import { createLogger } from '@bus/observability';
import { knexLog } from './database';

/** knexLog on a logger at `level` whose JSON lines the test reads. */
function logged(level = 'debug', url?: string) {
  const lines: string[] = [];
  const logger = createLogger({ service: 'test', level, destination: new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }) });
  return { log: knexLog(logger, url), lines: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('knexLog', () => {
  it("writes knex's multi-line warning as one JSON line: its first line the message, the stack as detail", () => {
    const { log, lines } = logged();
    log.warn!('Connection Error: Error: terminating connection due to administrator command\n    at Parser.parseErrorMessage (parser.js:1:1)');
    expect(lines()).toEqual([
      expect.objectContaining({
        level: 'warn',
        service: 'test',
        msg: 'knex: Connection Error: Error: terminating connection due to administrator command',
        detail: '    at Parser.parseErrorMessage (parser.js:1:1)',
      }),
    ]);
  });

  it('logs a failed acquire at debug only: the query it fails is logged by its caller', () => {
    const acquire = 'Acquire connection error: Error: connect ECONNREFUSED 127.0.0.1:5432\n    at TCPConnectWrap.afterConnect (node:net:1611:16)';
    const atInfo = logged('info');
    atInfo.log.warn!(acquire);
    expect(atInfo.lines()).toEqual([]);
    const atDebug = logged('debug');
    atDebug.log.warn!(acquire);
    expect(atDebug.lines()).toEqual([
      expect.objectContaining({ level: 'debug', msg: 'knex: Acquire connection error: Error: connect ECONNREFUSED 127.0.0.1:5432' }),
    ]);
  });

  it('keeps the levels of errors and deprecations', () => {
    const { log, lines } = logged();
    log.error!('Knex: run\n$ npm install pg --save');
    // knex calls it with the message it formatted (lib/logger.js), whatever its types say.
    (log.deprecate as unknown as (message: string) => void)('json(true) is deprecated, please use jsonb()');
    expect(lines().map((l) => [l.level, l.msg])).toEqual([
      ['error', 'knex: Knex: run'],
      ['warn', 'knex: json(true) is deprecated, please use jsonb()'],
    ]);
  });

  it("never writes a connection string's password", () => {
    const { log, lines } = logged('debug', 'postgres://bus:s3cr%40tPassword@db.example:5432/bus');
    log.warn!('Connection Error: could not reach postgres://bus:s3cr@tPassword@db.example:5432/bus');
    log.warn!("Connection Error: host=db user=bus password='s3cr@tPassword' dbname=bus");
    log.warn!('Connection Error: the server said s3cr@tPassword');
    const text = JSON.stringify(lines());
    expect(text).not.toContain('s3cr@tPassword');
    expect(text).not.toContain('tPassword');
    expect(lines().map((l) => l.msg)).toEqual([
      'knex: Connection Error: could not reach postgres://bus:[redacted]@db.example:5432/bus',
      'knex: Connection Error: host=db user=bus password=[redacted] dbname=bus',
      'knex: Connection Error: the server said [redacted]',
    ]);
  });
});
