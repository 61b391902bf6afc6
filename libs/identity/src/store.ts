import { consumerToolsColumns, consumerToolsOf, preparedQuery, type ConsumerTools, type JoinedConsumerToolsRow, type Knex, type Row } from '@bus/db';
import type { ConnectionState, PublicJwk, SigningKeyLifecycle } from '@bus/tokens';

/** A connection as the token service and the bearer routes see it. */
export interface ConnectionRecord extends ConnectionState {
  /** The organisation that owns the workspace (the token's org claim). */
  organisationId: string;
  /**
   * A consumer connection's testing settings (fault injection, dead-letter threshold), read with the
   * connection so the pull API pays no round trip for them; null when none is on.
   */
  consumerTools: ConsumerTools | null;
}

export interface CredentialRecord {
  version: number;
  secretHash: string;
  /** Set on a secret a rotation replaced: usable until then, never after. Null for the current one. */
  usableUntil: Date | null;
}

export interface PublishedKey extends SigningKeyLifecycle {
  publicJwk: PublicJwk;
}

/** Reads of the identity tables (libs/db migrations own their layout). */
export interface IdentityStore {
  connection(clientId: string): Promise<ConnectionRecord | null>;
  /** Every credential of the connection, newest version first. */
  credentials(clientId: string): Promise<CredentialRecord[]>;
  /** Signing keys' public halves with their lifecycle; the caller picks what is published at its now. */
  signingKeys(): Promise<PublishedKey[]>;
}

type ConnectionRow = Pick<Row<'connections'>, 'id' | 'kind' | 'status' | 'credential_version' | 'app_id'> & {
  app_workspace_id: Row<'apps'>['workspace_id'];
} & Pick<Row<'workspaces'>, 'organisation_id'> &
  JoinedConsumerToolsRow;

export class KnexIdentityStore implements IdentityStore {
  private constructor(private readonly db: Knex) {}

  static create(db: Knex): KnexIdentityStore {
    return new KnexIdentityStore(db);
  }

  // Both reads run on every token request (and connection on each identity-cache miss): prepared
  // statements, so Postgres plans the four-table join once per pool connection (bench:token, docs/benchmarks.md#token-issuance).
  async connection(clientId: string): Promise<ConnectionRecord | null> {
    const [row] = await preparedQuery<ConnectionRow>(
      this.db,
      'identity.connection',
      `SELECT c.id, c.kind, c.status, c.credential_version, c.app_id, a.workspace_id AS app_workspace_id, w.organisation_id,
              ${consumerToolsColumns('t').join(', ')}
         FROM connections c
         JOIN apps a ON a.id = c.app_id
         JOIN workspaces w ON w.id = a.workspace_id
         LEFT JOIN consumer_tools t ON t.consumer_id = c.id
        WHERE c.id = :clientId`,
      { clientId },
    );
    if (!row) return null;
    return {
      id: row.id,
      kind: row.kind,
      status: row.status,
      credentialVersion: row.credential_version,
      // The workspace that holds the app now: a token of a workspace the app left is refused.
      workspaceId: row.app_workspace_id,
      appId: row.app_id,
      organisationId: row.organisation_id,
      consumerTools: consumerToolsOf(row),
    };
  }

  async credentials(clientId: string): Promise<CredentialRecord[]> {
    const rows = await preparedQuery<Pick<Row<'credentials'>, 'version' | 'secret_hash' | 'usable_until'>>(
      this.db,
      'identity.credentials',
      'SELECT version, secret_hash, usable_until FROM credentials WHERE connection_id = :clientId ORDER BY version DESC',
      { clientId },
    );
    return rows.map((r) => ({ version: r.version, secretHash: r.secret_hash, usableUntil: r.usable_until }));
  }

  async signingKeys(): Promise<PublishedKey[]> {
    return (await readSigningKeys(this.db)).map(({ sealed: _sealed, ...published }) => published);
  }
}

/** A signing_keys row: the public half with its lifecycle, and the private half sealed. */
export interface StoredSigningKey extends PublishedKey {
  sealed: string;
}

/** Every signing key; the token service unseals `sealed`, the bearer routes use only the public half. */
export async function readSigningKeys(db: Knex | Knex.Transaction): Promise<StoredSigningKey[]> {
  const rows = await db('signing_keys').select('*');
  return rows.map((r) => ({
    kid: r.kid,
    // Written from a PublicJwk by the token service (services/auth signing-keys.ts).
    publicJwk: r.public_jwk as PublicJwk,
    sealed: r.private_key_sealed,
    createdAt: r.created_at,
    activatesAt: r.activates_at,
    retiresAt: r.retires_at,
    unpublishAt: r.unpublish_at,
  }));
}
