import type { KeyObject } from 'node:crypto';
import type { Knex } from '@bus/db';
import { decryptPrivateKey, encryptPrivateKey, generateSigningKey, planRotation, publishedKeysAt, signingKeyAt, type PublicJwk } from '@bus/tokens';
import { readSigningKeys, type StoredSigningKey } from '@bus/identity';
import type { Logger } from 'pino';

type KeyRow = StoredSigningKey;

export class NoSigningKeyError extends Error {
  override readonly name = 'NoSigningKeyError';
}

export interface SigningKeysDeps {
  db: Knex;
  encryptionKey: Buffer;
  rotationIntervalMs: number;
  logger: Logger;
  now: () => Date;
  /** How often the in-memory copy of the key rows is refreshed and rotation runs; default 60 s. */
  checkEveryMs?: number;
}

/**
 * The token service's signing keys: rotation (one replica at a time, under an advisory lock), the
 * key that signs now (private half decrypted once per process), and the published key set.
 */
export class SigningKeys {
  private rows: KeyRow[] = [];
  private loadedAt = -Infinity;
  private readonly privateKeys = new Map<string, KeyObject>();
  private timer: NodeJS.Timeout | undefined;

  private constructor(private readonly deps: SigningKeysDeps) {}

  static create(deps: SigningKeysDeps): SigningKeys {
    return new SigningKeys(deps);
  }

  /** Creates, retires and deletes keys as planRotation says, then reloads. Safe on every replica at once. */
  async rotate(): Promise<void> {
    const now = this.deps.now();
    await this.deps.db.transaction(async (trx) => {
      await trx.raw(`SELECT pg_advisory_xact_lock(hashtext('bus.signing_keys'))`);
      const rows = await readSigningKeys(trx);
      const plan = planRotation(rows, now, this.deps.rotationIntervalMs);
      if (plan.remove.length > 0) await trx('signing_keys').whereIn('kid', plan.remove).delete();
      if (plan.retire) {
        await trx('signing_keys').where({ kid: plan.retire.kid }).update({ retires_at: plan.retire.retiresAt, unpublish_at: plan.retire.unpublishAt });
      }
      if (plan.create) {
        const key = generateSigningKey();
        await trx('signing_keys').insert({
          kid: key.kid,
          public_jwk: JSON.stringify(key.publicJwk),
          private_key_sealed: encryptPrivateKey(key.privateKey, key.kid, this.deps.encryptionKey),
          created_at: now,
          activates_at: plan.create.activatesAt,
        });
        this.deps.logger.info({ kid: key.kid, activates_at: plan.create.activatesAt.toISOString() }, 'signing key created');
      }
    });
    await this.reload();
  }

  /** The key that signs now, with its private half. */
  async current(): Promise<{ kid: string; privateKey: KeyObject }> {
    await this.refreshIfStale();
    let row = signingKeyAt(this.rows, this.deps.now());
    if (!row) {
      await this.rotate();
      row = signingKeyAt(this.rows, this.deps.now());
    }
    if (!row) throw new NoSigningKeyError('no signing key is active');
    let privateKey = this.privateKeys.get(row.kid);
    if (!privateKey) {
      privateKey = decryptPrivateKey(row.sealed, row.kid, this.deps.encryptionKey);
      this.privateKeys.set(row.kid, privateKey);
    }
    return { kid: row.kid, privateKey };
  }

  /** The key set (docs/api.md#signing-key-set): the next key before it signs, the old one while its tokens live. */
  async published(): Promise<PublicJwk[]> {
    await this.refreshIfStale();
    // Rebuilt in the spec's field order (jsonb does not keep the stored order).
    return publishedKeysAt(this.rows, this.deps.now()).map(({ publicJwk: k }) => ({
      kty: k.kty,
      crv: k.crv,
      x: k.x,
      y: k.y,
      kid: k.kid,
      alg: k.alg,
      use: k.use,
    }));
  }

  /**
   * Rotation now and then every check interval, until stop. A failure is logged, not thrown: a
   * process whose Postgres is down at start-up still starts (and is not ready); a token request
   * then retries and answers 503 temporarily_unavailable until it succeeds.
   */
  async start(): Promise<void> {
    const attempt = () => this.rotate().catch((err: unknown) => this.deps.logger.error({ err }, 'signing-key rotation failed'));
    await attempt();
    this.timer = setInterval(() => void attempt(), this.deps.checkEveryMs ?? 60_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
  }

  private async refreshIfStale(): Promise<void> {
    if (this.deps.now().getTime() - this.loadedAt < (this.deps.checkEveryMs ?? 60_000) / 2) return;
    try {
      await this.reload();
    } catch (err) {
      // Keep signing with what we have while Postgres is briefly away; without keys there is nothing to do.
      if (this.rows.length === 0) throw err;
      this.deps.logger.warn({ err }, 'signing keys not refreshed');
    }
  }

  private async reload(): Promise<void> {
    this.rows = await readSigningKeys(this.deps.db);
    this.loadedAt = this.deps.now().getTime();
    for (const kid of this.privateKeys.keys()) if (!this.rows.some((r) => r.kid === kid)) this.privateKeys.delete(kid);
  }
}
