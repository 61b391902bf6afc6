import { createRemoteJWKSet, type JWTVerifyGetKey } from 'jose';
import { keysetPage, type Knex, type ListPage, type Row } from '@bus/db';
import { DependencyUnavailableError } from '@bus/http';
import {
  CLIENT_FORM,
  ISSUER_FORM,
  KeySetUnavailableError,
  NotRegisteredError,
  TokenRejectedError,
  verifyExternalToken,
  type ExternalIssuer,
  type VerifiedExternalToken,
} from '@bus/tokens';
import { unavailableOnFailure, type BoundClients } from './authenticate';

/** A registered external identity provider (docs/admin.md "Identity providers"). */
export interface ProviderRecord extends ExternalIssuer {
  id: string;
  createdAt: Date;
}

/** (provider, client claim value) → one connection. */
export interface BindingRecord {
  id: string;
  providerId: string;
  client: string;
  connectionId: string;
  createdAt: Date;
}

/** Reads of the provider tables (migration 011). */
export interface ProviderStore {
  providerByIssuer(issuer: string): Promise<ProviderRecord | null>;
  provider(id: string): Promise<ProviderRecord | null>;
  providers(): Promise<ProviderRecord[]>;
  binding(providerId: string, client: string): Promise<BindingRecord | null>;
  bindings(providerId: string, page?: ListPage): Promise<BindingRecord[]>;
}

export class KnexProviderStore implements ProviderStore {
  private constructor(private readonly db: Knex) {}

  static create(db: Knex): KnexProviderStore {
    return new KnexProviderStore(db);
  }

  async providerByIssuer(issuer: string): Promise<ProviderRecord | null> {
    const row = await this.db('identity_providers').where({ issuer }).first();
    return row ? providerOf(row) : null;
  }

  async provider(id: string): Promise<ProviderRecord | null> {
    const row = await this.db('identity_providers').where({ id }).first();
    return row ? providerOf(row) : null;
  }

  async providers(): Promise<ProviderRecord[]> {
    return (await this.db('identity_providers').orderBy('created_at').orderBy('id')).map(providerOf);
  }

  async binding(providerId: string, client: string): Promise<BindingRecord | null> {
    const row = await this.db('identity_bindings').where({ provider_id: providerId, client_value: client }).first();
    return row ? bindingOf(row) : null;
  }

  /** A provider's bindings in the order they were made, a page at a time (migration 030 indexes that order). */
  async bindings(providerId: string, page?: ListPage): Promise<BindingRecord[]> {
    const query = this.db('identity_bindings').where({ provider_id: providerId }).orderBy('created_at').orderBy('id').select('*');
    return (await keysetPage(query, { table: 'identity_bindings' }, page)).map(bindingOf);
  }

  async bindingById(providerId: string, id: string): Promise<BindingRecord | null> {
    const row = await this.db('identity_bindings').where({ provider_id: providerId, id }).first();
    return row ? bindingOf(row) : null;
  }

  /** The bindings to one connection, of every provider (the portal's connection page). */
  async connectionBindings(connectionId: string): Promise<BindingRecord[]> {
    return (await this.db('identity_bindings').where({ connection_id: connectionId }).orderBy('created_at').orderBy('id')).map(bindingOf);
  }
}

function providerOf(row: Row<'identity_providers'>): ProviderRecord {
  return {
    id: row.id,
    issuer: row.issuer,
    jwksUrl: row.jwks_url,
    audiences: row.audiences,
    algorithms: row.algorithms,
    clientClaim: row.client_claim,
    clockToleranceSeconds: row.clock_tolerance_seconds,
    createdAt: row.created_at,
  };
}

function bindingOf(row: Row<'identity_bindings'>): BindingRecord {
  return { id: row.id, providerId: row.provider_id, client: row.client_value, connectionId: row.connection_id, createdAt: row.created_at };
}

/** 503 identity.provider_unavailable: the issuer's key set could not be fetched; retry shortly. The cause is logged. */
export class IdentityProviderUnavailableError extends DependencyUnavailableError {
  override readonly name = 'IdentityProviderUnavailableError';
  constructor(cause: KeySetUnavailableError) {
    super(
      'identity.provider_unavailable',
      "The identity provider's key set could not be fetched, so the token could not be checked; nothing was carried out. Retry shortly",
      cause,
    );
  }
}

/** jose's remote key set settings: docs/api.md#limits 5-minute key-set cache, a refetch on an unknown kid at most every `cooldownMs`. */
export interface RemoteKeySetOptions {
  cacheMaxAgeMs?: number;
  cooldownMs?: number;
  /** A fetch slower than this fails (503): a hanging provider does not hold requests open. */
  timeoutMs?: number;
}

/**
 * Verifies external tokens against each issuer's JWKS, fetched by jose's createRemoteJWKSet and
 * kept per JWKS URL (one fetch shared by concurrent requests; cached 5 minutes; an unknown kid
 * refetches at most every 5 s, so a provider's key rotation is picked up within seconds while a
 * flood of forged kids costs one fetch per cooldown).
 */
export class ExternalTokenVerifier {
  private readonly keySets = new Map<string, JWTVerifyGetKey>();

  constructor(
    private readonly options: RemoteKeySetOptions = {},
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** The verified client value and claims; 401 TokenRejectedError, or 503 IdentityProviderUnavailableError. */
  async verify(token: string, issuer: ExternalIssuer): Promise<VerifiedExternalToken> {
    try {
      return await verifyExternalToken(token, issuer, this.keySetOf(issuer.jwksUrl), this.now());
    } catch (err) {
      if (err instanceof KeySetUnavailableError) throw new IdentityProviderUnavailableError(err);
      throw err;
    }
  }

  /** Forgets every fetched key set (a provider changed: its JWKS URL may have). */
  forget(): void {
    this.keySets.clear();
  }

  private keySetOf(jwksUrl: string): JWTVerifyGetKey {
    let keySet = this.keySets.get(jwksUrl);
    if (!keySet) {
      keySet = createRemoteJWKSet(new URL(jwksUrl), {
        cacheMaxAge: this.options.cacheMaxAgeMs ?? 300_000,
        cooldownDuration: this.options.cooldownMs ?? 5_000,
        timeoutDuration: this.options.timeoutMs ?? 3_000,
      });
      this.keySets.set(jwksUrl, keySet);
    }
    return keySet;
  }
}

/**
 * The bus's registered providers behind the bearer routes: the provider by the token's exact iss,
 * its verified client, and that client's binding. Reads go through the identity caches the control
 * topic drops (provider.changed, binding.changed), so a removal applies within ~2 s.
 */
export function createBoundClients(deps: {
  providers: { get(issuer: string): Promise<ProviderRecord | null> };
  /** Keyed by bindingKey(provider id, client). */
  bindings: { get(key: string): Promise<BindingRecord | null> };
  verifier: ExternalTokenVerifier;
}): BoundClients {
  return {
    connectionOf: async (token, issuer) => {
      if (!ISSUER_FORM.test(issuer)) throw new TokenRejectedError('issuer');
      const provider = await unavailableOnFailure(() => deps.providers.get(issuer));
      if (!provider) throw new TokenRejectedError('issuer');
      const { client } = await deps.verifier.verify(token, provider);
      // No binding can hold another client value (admin.json's BindingCreate).
      if (!CLIENT_FORM.test(client)) throw new NotRegisteredError('unbound');
      const binding = await unavailableOnFailure(() => deps.bindings.get(bindingKey(provider.id, client)));
      if (!binding) throw new NotRegisteredError('unbound');
      return binding.connectionId;
    },
  };
}

/** The bindings cache's key: the provider and the client value (a newline cannot occur in a provider id). */
export function bindingKey(providerId: string, client: string): string {
  return `${providerId}\n${client}`;
}

/** The inverse of bindingKey, for the cache's loader. */
export function parseBindingKey(key: string): { providerId: string; client: string } {
  const at = key.indexOf('\n');
  return { providerId: key.slice(0, at), client: key.slice(at + 1) };
}
