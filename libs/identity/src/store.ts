import { consumerToolsColumns, consumerToolsOf, type ConsumerTools, type ConsumerToolsRow, type Knex } from '@bus/db';
import type { ConnectionKind, ConnectionState, ConnectionStatus, PublicJwk, SigningKeyLifecycle } from '@bus/tokens';

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

interface ConnectionRow extends Partial<ConsumerToolsRow> {
  id: string;
  kind: ConnectionKind;
  status: ConnectionStatus;
  credential_version: number;
  app_id: string;
  app_workspace_id: string;
  organisation_id: string;
}

export class KnexIdentityStore implements IdentityStore {
  private constructor(private readonly db: Knex) {}

  static create(db: Knex): KnexIdentityStore {
    return new KnexIdentityStore(db);
  }

  async connection(clientId: string): Promise<ConnectionRecord | null> {
    const row = (await this.db('connections as c')
      .join('apps as a', 'a.id', 'c.app_id')
      .join('workspaces as w', 'w.id', 'a.workspace_id')
      .leftJoin('consumer_tools as t', 't.consumer_id', 'c.id')
      .where('c.id', clientId)
      .first(
        ...consumerToolsColumns('t'),
        'c.id',
        'c.kind',
        'c.status',
        'c.credential_version',
        'c.app_id',
        'a.workspace_id as app_workspace_id',
        'w.organisation_id',
      )) as ConnectionRow | undefined;
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
    const rows = (await this.db('credentials')
      .where({ connection_id: clientId })
      .orderBy('version', 'desc')
      .select('version', 'secret_hash', 'usable_until')) as Array<{ version: number; secret_hash: string; usable_until: Date | null }>;
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
  const rows = (await db('signing_keys').select('*')) as Array<{
    kid: string;
    public_jwk: PublicJwk;
    private_key_sealed: string;
    created_at: Date;
    activates_at: Date;
    retires_at: Date | null;
    unpublish_at: Date | null;
  }>;
  return rows.map((r) => ({
    kid: r.kid,
    publicJwk: r.public_jwk,
    sealed: r.private_key_sealed,
    createdAt: r.created_at,
    activatesAt: r.activates_at,
    retiresAt: r.retires_at,
    unpublishAt: r.unpublish_at,
  }));
}
