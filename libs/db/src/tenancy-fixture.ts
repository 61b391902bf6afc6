import { randomInt } from 'node:crypto';
import type { Knex } from 'knex';
import type { EnumValue, Row, Written } from './tables';

/** A tenant as a test sets it up: the ids of each level, in creation order. */
export interface TestTenant {
  organisationId: string;
  workspaceId: string;
  appId: string;
  /** The connections' ids, in the order asked for. */
  connectionIds: string[];
}

export interface TestTenantOptions {
  organisationId?: string;
  workspaceId?: string;
  appId?: string;
  connections?: ReadonlyArray<{ id?: string; kind: EnumValue<'connection_kind'>; status?: EnumValue<'connection_status'> }>;
  permissions?: { systemIds?: readonly string[]; messageTypes?: readonly string[] };
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** A fresh id of the tables' format: the prefix and 12 characters of [a-z2-7]. */
function testId(prefix: 'o' | 'w' | 'a' | 'c'): string {
  return prefix + Array.from({ length: 12 }, () => BASE32[randomInt(BASE32.length)]).join('');
}

/**
 * Test data for the tenancy tables (organisation → workspace → app → connections with permissions),
 * written straight into a migrated test database, in the style of Immich's medium-test context: each
 * method inserts one level with defaults for whatever the test does not care about and answers the
 * row. Tests use it instead of inserting those rows by hand; product code goes through IdentityAdmin.
 */
export class TenancyFixture {
  private constructor(private readonly db: Knex) {}

  static create(db: Knex): TenancyFixture {
    return new TenancyFixture(db);
  }

  async organisation(row: Written<'organisations'> = {}): Promise<Row<'organisations'>> {
    const [created] = await this.db('organisations')
      .insert({ id: testId('o'), name: 'House', kind: 'house', ...row })
      .returning('*');
    return created!;
  }

  async workspace(row: Written<'workspaces'> & { organisation_id: string }): Promise<Row<'workspaces'>> {
    const [created] = await this.db('workspaces')
      .insert({ id: testId('w'), name: 'W', ...row })
      .returning('*');
    return created!;
  }

  /** The app belongs to its workspace's organisation unless the row names another (a vendor). */
  async app(row: Written<'apps'> & { workspace_id: string }): Promise<Row<'apps'>> {
    const workspace = await this.db('workspaces').where({ id: row.workspace_id }).first('organisation_id');
    const [created] = await this.db('apps')
      .insert({ id: testId('a'), organisation_id: workspace?.organisation_id, name: 'A', ...row })
      .returning('*');
    return created!;
  }

  /** The connection is in its app's workspace unless the row says otherwise. */
  async connection(row: Written<'connections'> & { app_id: string; kind: EnumValue<'connection_kind'> }): Promise<Row<'connections'>> {
    const app = await this.db('apps').where({ id: row.app_id }).first('workspace_id');
    const [created] = await this.db('connections')
      .insert({ id: testId('c'), workspace_id: app?.workspace_id, ...row })
      .returning('*');
    return created!;
  }

  async permissions(appId: string, permissions: { systemIds?: readonly string[]; messageTypes?: readonly string[] }): Promise<void> {
    const rows: Array<Written<'permissions'>> = [
      ...(permissions.systemIds ?? []).map((value) => ({ app_id: appId, kind: 'system_id' as const, value })),
      ...(permissions.messageTypes ?? []).map((value) => ({ app_id: appId, kind: 'message_type' as const, value })),
    ];
    if (rows.length > 0) await this.db('permissions').insert(rows);
  }

  /** A whole tenant: an organisation (a house) with one workspace, one app of it, and its connections and permissions. */
  async tenant(options: TestTenantOptions = {}): Promise<TestTenant> {
    const organisation = await this.organisation(options.organisationId === undefined ? {} : { id: options.organisationId });
    const workspace = await this.workspace({ organisation_id: organisation.id, ...(options.workspaceId === undefined ? {} : { id: options.workspaceId }) });
    const app = await this.app({ workspace_id: workspace.id, ...(options.appId === undefined ? {} : { id: options.appId }) });
    const connectionIds: string[] = [];
    for (const connection of options.connections ?? []) {
      connectionIds.push((await this.connection({ app_id: app.id, ...connection })).id);
    }
    if (options.permissions) await this.permissions(app.id, options.permissions);
    return { organisationId: organisation.id, workspaceId: workspace.id, appId: app.id, connectionIds };
  }
}
