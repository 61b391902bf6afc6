import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { requireEnv } from './env';

export interface TestDatabase {
  /** Connection URL of the fresh, empty database. */
  url: string;
  name: string;
  drop(): Promise<void>;
}

/**
 * A new empty database on the real server of DATABASE_URL (or of `adminUrl`), so each test file owns
 * its schema and parallel test files never see each other's rows.
 */
export async function createTestDatabase(prefix = 'bus_test', adminUrl = requireEnv('DATABASE_URL')): Promise<TestDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await withClient(adminUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () => withClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

export async function withClient<T>(url: string, run: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}
