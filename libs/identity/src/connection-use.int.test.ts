import pino from 'pino';
import { useTestDatabase } from '@bus/fixtures';
import type { Knex } from '@bus/db';
import { createConnectionUse, LAST_USED_PRECISION_MS } from './index';

const database = useTestDatabase({ applicationName: 'connection-use-test', poolMax: 2 });
let db: Knex;
let producer: string;
let consumer: string;

// Each UPDATE that changes connections.last_used_at is counted by a trigger, so "no write per request"
// is counted, not inferred from the column.
beforeAll(async () => {
  db = database.db;
  [producer, consumer] = (await database.tenancy.tenant({ connections: [{ kind: 'producer' }, { kind: 'consumer' }] })).connectionIds as [string, string];
  await db.raw('CREATE TABLE last_used_writes (connection_id text NOT NULL)');
  await db.raw(`CREATE FUNCTION count_last_used_write() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN INSERT INTO last_used_writes VALUES (NEW.id); RETURN NEW; END $$`);
  await db.raw(`CREATE TRIGGER count_last_used AFTER UPDATE OF last_used_at ON connections FOR EACH ROW
    WHEN (OLD.last_used_at IS DISTINCT FROM NEW.last_used_at) EXECUTE FUNCTION count_last_used_write()`);
}, 30_000);

const writes = async (id: string) =>
  Number((await db('last_used_writes').where({ connection_id: id }).count<Array<{ count: string }>>('* as count'))[0]!.count);
const lastUsed = async (id: string) => (await db('connections').where({ id }).first('last_used_at'))!.last_used_at;
const silent = pino({ level: 'silent' });

describe('connection use (last_used_at) on the real Postgres', () => {
  it('writes once a minute per connection whatever the number of uses, and again once the minute has passed', async () => {
    let now = 1_000_000;
    const use = createConnectionUse({ db, logger: silent, now: () => now });
    await Promise.all([...Array.from({ length: 50 }, () => use.used(producer)), use.used(consumer)]);
    expect([await writes(producer), await writes(consumer)]).toEqual([1, 1]);
    const first = await lastUsed(producer);
    expect(first).toBeInstanceOf(Date);

    // A minute later in this process, but the row was written within the minute (by this process or
    // another): the statement leaves it.
    now += LAST_USED_PRECISION_MS;
    await use.used(producer);
    await createConnectionUse({ db, logger: silent }).used(producer);
    expect(await writes(producer)).toBe(1);

    // Once the row is a minute old, the next use after the process's minute writes it, once.
    await db('connections')
      .where({ id: producer })
      .update({ last_used_at: db.raw("now() - interval '61 seconds'") });
    const before = await writes(producer);
    now += LAST_USED_PRECISION_MS;
    await Promise.all(Array.from({ length: 10 }, () => use.used(producer)));
    expect(await writes(producer)).toBe(before + 1);
    // Written now, not the minute-old time set above.
    expect(Date.now() - (await lastUsed(producer))!.getTime()).toBeLessThan(30_000);
  });

  it('never rejects: a failed write is logged with its cause, and the use goes on', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
    const gone = { client: { acquireConnection: () => Promise.reject(new Error('database gone')) } } as unknown as Knex;
    await expect(createConnectionUse({ db: gone, logger }).used(producer)).resolves.toBeUndefined();
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({
        msg: 'last_used_at of the connection not recorded',
        connection_id: producer,
        err: expect.objectContaining({ message: 'database gone' }),
      }),
    ]);
  });
});
