import { randomBytes } from 'node:crypto';
import { useTestDatabase } from '@bus/fixtures';
import { PrincipalStore, PrincipalsFullError, PRINCIPALS_PER_CONNECTION_MAX } from './index';

/** AWS principals on the real Postgres: a connection holds at most PRINCIPALS_PER_CONNECTION_MAX, revoked ones counted. */

const database = useTestDatabase({ applicationName: 'principals-test', poolMax: 4 });
const ROLE = 'arn:aws:iam::123456789012:role/bus-reader';

it('registers up to the bound, revoked ones counted, refuses past it even four at once, and has room again once one is removed', async () => {
  const [connection] = (await database.tenancy.tenant({ connections: [{ kind: 'consumer' }] })).connectionIds as [string];
  const store = PrincipalStore.create({ db: database.db, encryptionKey: randomBytes(32) });
  const registered = [];
  for (let i = 0; i < PRINCIPALS_PER_CONNECTION_MAX - 1; i += 1) registered.push((await store.register(connection, ROLE)).principal);
  await store.revoke(registered[0]!.access_key_id);
  // One place left: of four registrations at once, one gets it.
  const outcomes = await database.atOnce([1, 2, 3, 4].map(() => () => store.register(connection, ROLE)));
  expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
  expect(outcomes.find((o) => o.status === 'rejected')).toMatchObject({ reason: expect.any(PrincipalsFullError) });
  expect(await store.list({ connectionId: connection })).toHaveLength(PRINCIPALS_PER_CONNECTION_MAX);
  await expect(store.register(connection, ROLE)).rejects.toThrow(
    `a connection holds at most ${PRINCIPALS_PER_CONNECTION_MAX} AWS principals: remove one first`,
  );
  expect(await store.remove(registered[0]!.access_key_id)).toBe(true);
  await expect(store.register(connection, ROLE)).resolves.toMatchObject({ principal: { status: 'pending' } });
});
