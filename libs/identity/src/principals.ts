import { countHeldUnderLock, type Knex, type Row } from '@bus/db';
import type { SigningKey } from './sigv4';
import { hashSecret, newAccessKeyId, newChallenge, newSecretAccessKey, seal, unseal } from '@bus/tokens';

/** A principal's state (migration 010): pending until verified, revoked for good. */
export type PrincipalStatus = Row<'aws_principals'>['status'];

/** A principal as the admin API lists it: never its secret. */
export interface PrincipalView {
  access_key_id: string;
  client_id: string;
  role_arn: string;
  status: PrincipalStatus;
  created_at: string;
  verified_at: string | null;
  revoked_at: string | null;
}

/** What a SigV4 verifier needs of an access key id: the secret to recompute the HMAC and whose it is. */
export interface SigningPrincipal extends SigningKey {
  accessKeyId: string;
  connectionId: string;
  roleArn: string;
  status: PrincipalStatus;
}

/** A challenge's lifetime: the brief's "at most 10 minutes", all of it. */
export const CHALLENGE_TTL_MS = 10 * 60_000;

export class PrincipalNotFoundError extends Error {
  override readonly name = 'PrincipalNotFoundError';
  constructor(readonly accessKeyId: string) {
    super(`no AWS principal ${accessKeyId}`);
  }
}

/** A challenge asked for a principal that is not pending (already verified, or revoked). */
export class PrincipalNotPendingError extends Error {
  override readonly name = 'PrincipalNotPendingError';
  constructor(
    readonly accessKeyId: string,
    readonly status: PrincipalStatus,
  ) {
    super(`AWS principal ${accessKeyId} is ${status}; only a pending principal gets a challenge`);
  }
}

/**
 * Principals one connection holds at most, whatever their status (a revoked one stays listed until
 * removed): every list of them stays short, as IAM keeps a user to two access keys.
 */
export const PRINCIPALS_PER_CONNECTION_MAX = 10;

/** A registration would take the connection past PRINCIPALS_PER_CONNECTION_MAX. */
export class PrincipalsFullError extends Error {
  override readonly name = 'PrincipalsFullError';
  constructor(readonly connectionId: string) {
    super(`a connection holds at most ${PRINCIPALS_PER_CONNECTION_MAX} AWS principals: remove one first`);
  }
}

type PrincipalRow = Row<'aws_principals'>;

export interface PrincipalStoreDeps {
  db: Knex;
  /** SIGNING_KEY_ENCRYPTION_KEY: seals the secret access keys as it seals the signing keys. */
  encryptionKey: Buffer;
  now?: () => Date;
}

/**
 * The one reader and writer of aws_principals: the admin API registers, lists, revokes and removes
 * principals and issues challenges; the signed routes resolve an access key id to its secret and
 * verify a challenge. No cache: a revocation applies to the next signed request.
 */
export class PrincipalStore {
  private readonly now: () => Date;

  private constructor(private readonly deps: PrincipalStoreDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  static create(deps: PrincipalStoreDeps): PrincipalStore {
    return new PrincipalStore(deps);
  }

  /**
   * Registers a role ARN on a connection (the caller checked both); the secret is in the answer only.
   * PrincipalsFullError when the connection holds PRINCIPALS_PER_CONNECTION_MAX already: the count and
   * the insert under the connection's row lock, so two registrations at once cannot pass it together.
   */
  async register(connectionId: string, roleArn: string): Promise<{ principal: PrincipalView; secretAccessKey: string }> {
    const accessKeyId = newAccessKeyId();
    const secretAccessKey = newSecretAccessKey();
    return this.deps.db.transaction(async (trx) => {
      const held = (await countHeldUnderLock(trx, connectionId, { holder: 'connections', table: 'aws_principals', column: 'connection_id' }))?.held ?? 0;
      if (held >= PRINCIPALS_PER_CONNECTION_MAX) throw new PrincipalsFullError(connectionId);
      const [row] = await trx('aws_principals')
        .insert({
          access_key_id: accessKeyId,
          connection_id: connectionId,
          role_arn: roleArn,
          secret_sealed: seal(Buffer.from(secretAccessKey, 'utf8'), accessKeyId, this.deps.encryptionKey),
          status: 'pending',
          created_at: this.now(),
        })
        .returning('*');
      // An insert of one row returns that row.
      return { principal: view(row!), secretAccessKey };
    });
  }

  async list(filter: { connectionId?: string }): Promise<PrincipalView[]> {
    const query = this.deps.db('aws_principals').orderBy([{ column: 'created_at' }, { column: 'access_key_id' }]);
    if (filter.connectionId !== undefined) query.where('connection_id', filter.connectionId);
    return (await query).map(view);
  }

  async get(accessKeyId: string): Promise<PrincipalView | undefined> {
    const row = await this.deps.db('aws_principals').where('access_key_id', accessKeyId).first();
    return row ? view(row) : undefined;
  }

  /** Revokes for good (a revoked principal never signs again); revoking twice changes nothing. */
  async revoke(accessKeyId: string): Promise<PrincipalView> {
    await this.deps
      .db('aws_principals')
      .where('access_key_id', accessKeyId)
      .whereNot('status', 'revoked')
      .update({ status: 'revoked', revoked_at: this.now(), challenge_hash: null, challenge_expires_at: null });
    return (await this.get(accessKeyId)) ?? notFound(accessKeyId);
  }

  /** True when there was one to remove. */
  async remove(accessKeyId: string): Promise<boolean> {
    return (await this.deps.db('aws_principals').where('access_key_id', accessKeyId).delete()) > 0;
  }

  /**
   * A new one-time challenge for a pending principal, replacing any earlier one: only its SHA-256 is
   * kept, with an expiry CHALLENGE_TTL_MS from now.
   */
  async issueChallenge(accessKeyId: string): Promise<{ challenge: string; expiresAt: Date }> {
    const challenge = newChallenge();
    const expiresAt = new Date(this.now().getTime() + CHALLENGE_TTL_MS);
    const updated = await this.deps
      .db('aws_principals')
      .where({ access_key_id: accessKeyId, status: 'pending' })
      .update({ challenge_hash: hashSecret(challenge), challenge_expires_at: expiresAt });
    if (updated === 0) {
      const principal = (await this.get(accessKeyId)) ?? notFound(accessKeyId);
      throw new PrincipalNotPendingError(accessKeyId, principal.status);
    }
    return { challenge, expiresAt };
  }

  /**
   * Marks the principal verified if `challenge` is its outstanding, unexpired challenge — in one
   * statement, so two concurrent verifications cannot both succeed; the challenge is spent either way
   * it matched. Undefined when it is not (unknown, used, expired, or the principal is not pending).
   */
  async verify(accessKeyId: string, challenge: string): Promise<PrincipalView | undefined> {
    const [row] = await this.deps
      .db('aws_principals')
      .where({ access_key_id: accessKeyId, status: 'pending', challenge_hash: hashSecret(challenge) })
      .where('challenge_expires_at', '>', this.now())
      .update({ status: 'verified', verified_at: this.now(), challenge_hash: null, challenge_expires_at: null })
      .returning('*');
    return row ? view(row) : undefined;
  }

  /** The secret behind an access key id, for a SigV4 verifier; undefined for a key the bus never issued or removed. */
  async signingPrincipal(accessKeyId: string): Promise<SigningPrincipal | undefined> {
    const row = await this.deps.db('aws_principals').where('access_key_id', accessKeyId).first();
    if (!row) return undefined;
    return {
      accessKeyId: row.access_key_id,
      connectionId: row.connection_id,
      roleArn: row.role_arn,
      status: row.status,
      revoked: row.status === 'revoked',
      secretAccessKey: unseal(row.secret_sealed, row.access_key_id, this.deps.encryptionKey).toString('utf8'),
    };
  }
}

function view(row: PrincipalRow): PrincipalView {
  return {
    access_key_id: row.access_key_id,
    client_id: row.connection_id,
    role_arn: row.role_arn,
    status: row.status,
    created_at: row.created_at.toISOString(),
    verified_at: row.verified_at?.toISOString() ?? null,
    revoked_at: row.revoked_at?.toISOString() ?? null,
  };
}

function notFound(accessKeyId: string): never {
  throw new PrincipalNotFoundError(accessKeyId);
}
