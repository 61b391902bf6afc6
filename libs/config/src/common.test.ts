import { databaseConfig } from './common';
import { loadConfig } from './spec';

describe('databaseConfig', () => {
  const url = { DATABASE_URL: 'postgres://bus@db/bus' };

  it('bounds connecting at 5 s and one statement at 10 s unless told otherwise', () => {
    expect(loadConfig(databaseConfig, url)).toEqual({ ...url, DATABASE_POOL_MAX: 10, DATABASE_CONNECT_TIMEOUT: 5_000, DATABASE_STATEMENT_TIMEOUT: 10_000 });
  });

  it('refuses bounds out of range, naming the variable', () => {
    expect(() => loadConfig(databaseConfig, { ...url, DATABASE_CONNECT_TIMEOUT: '2m' })).toThrow(/DATABASE_CONNECT_TIMEOUT/);
    expect(() => loadConfig(databaseConfig, { ...url, DATABASE_STATEMENT_TIMEOUT: '0s' })).toThrow(/DATABASE_STATEMENT_TIMEOUT/);
  });
});
