import { countHeldUnderLock, isUniqueViolation, writeConsumerTools, type ConsumerTools, type Knex, type Written } from '@bus/db';
import { hashSecret, newClientSecret, newId, type ConnectionKind, type ExternalIssuer } from '@bus/tokens';
import type { Logger } from 'pino';
import type { ConnectionChange, ControlEvent, ControlPublisher, QuotaScope } from './control';

/**
 * What IdentityAdmin refuses, by kind: the caller asked for something that is not there
 * (`not_found`), that the resource's state does not allow (`conflict`), or that is out of range
 * (`invalid`). An HTTP edge maps the kind once (services/portal identityCall, docs/errors.md).
 */
export abstract class IdentityAdminError extends Error {
  abstract readonly kind: 'not_found' | 'conflict' | 'invalid';
}

/** What people call a connection (docs/api.md#connections-and-credentials): a name of one line, a description; empty when not given. */
export interface ConnectionAbout {
  name?: string;
  description?: string;
}

/** No such row: `what` names its kind for the answer ("no connection c…"). */
export abstract class IdentityNotFoundError extends IdentityAdminError {
  readonly kind = 'not_found';
  constructor(
    readonly what: string,
    readonly id: string,
  ) {
    super(`no ${what} ${id}`);
  }
}

export class ConnectionNotFoundError extends IdentityNotFoundError {
  override readonly name = 'ConnectionNotFoundError';
  constructor(readonly clientId: string) {
    super('connection', clientId);
  }
}

export class ConnectionNotActiveError extends IdentityAdminError {
  override readonly name = 'ConnectionNotActiveError';
  readonly kind = 'conflict';
  constructor(
    readonly clientId: string,
    readonly status: string,
  ) {
    super(`connection ${clientId} is ${status}`);
  }
}

export class AppNotFoundError extends IdentityNotFoundError {
  override readonly name = 'AppNotFoundError';
  constructor(readonly appId: string) {
    super('app', appId);
  }
}

export class TenancyNotFoundError extends IdentityNotFoundError {
  override readonly name = 'TenancyNotFoundError';
  constructor(
    override readonly what: QuotaScope,
    id: string,
  ) {
    super(what, id);
  }
}

/** No such identity provider or binding. */
export class ProviderNotFoundError extends IdentityNotFoundError {
  override readonly name = 'ProviderNotFoundError';
  constructor(
    override readonly what: 'identity provider' | 'binding',
    id: string,
  ) {
    super(what, id);
  }
}

/** The issuer is registered already, or the client is bound already. */
export class ProviderConflictError extends IdentityAdminError {
  override readonly name = 'ProviderConflictError';
  readonly kind = 'conflict';
}

/**
 * Identity providers one deployment registers at most: each is an issuer every gateway trusts and
 * fetches keys from, so they are few (IAM keeps an account to 100 OIDC providers), and their list is
 * one answer.
 */
export const PROVIDERS_MAX = 100;

/**
 * Bindings one connection holds at most, of all providers: each is a way into the connection, as an
 * AWS principal is (PRINCIPALS_PER_CONNECTION_MAX), and the connection's page lists them all.
 */
export const BINDINGS_PER_CONNECTION_MAX = 10;

export class OverlapWindowError extends IdentityAdminError {
  override readonly name = 'OverlapWindowError';
  readonly kind = 'invalid';
}

/**
 * Workspaces an organisation holds and apps a workspace holds, at most: neither is ever removed, and
 * the portal lists each organisation's workspaces and each workspace's apps on one page.
 */
export const WORKSPACES_PER_ORGANISATION_MAX = 100;
export const APPS_PER_WORKSPACE_MAX = 100;
/**
 * Connections a workspace holds at most, but removed ones (revoked ones count until removed): every
 * message is copied to each of its active consumers, and a message's trace lists them all.
 */
export const CONNECTIONS_PER_WORKSPACE_MAX = 1_000;
/** Workspaces of other organisations an organisation (a vendor) has apps in, at most: its portal page lists them too. */
export const OTHER_WORKSPACES_PER_ORGANISATION_MAX = 100;

/** An app created in a workspace for another organisation that is not a vendor. */
export class AppOwnerNotVendorError extends IdentityAdminError {
  override readonly name = 'AppOwnerNotVendorError';
  readonly kind = 'invalid';
}

/** A workspace, an app or a connection past its bound (the *_MAX above). */
export class TenancyFullError extends IdentityAdminError {
  override readonly name = 'TenancyFullError';
  readonly kind = 'conflict';
}

/** The longest overlap an owner may choose for a rotated secret. */
export const MAX_OVERLAP_SECONDS = 7 * 86_400;

/** A named tier of docs/api.md#limits, or the operator's custom limits (within the spec's ceiling; the tables check it). */
export type QuotaSetting = { tier: 'minimal' | 'standard' | 'high' } | { tier: 'custom'; perSecond: number; burst: number; perDay: number };

export interface IssuedCredential {
  clientId: string;
  /** Shown once: only its hash is stored. */
  clientSecret: string;
  credentialVersion: number;
}

export interface IdentityAdminDeps {
  db: Knex;
  control: ControlPublisher;
  logger: Logger;
  now?: () => Date;
}

/**
 * Tenancy and credential lifecycle: what the portal exposes (docs/admin.md) and the local seed uses.
 * Every change to a connection is committed first, then announced on the control topic so every
 * cache drops it at once; if the announcement fails the caches' TTL still bounds the delay.
 */
export class IdentityAdmin {
  private readonly now: () => Date;
  private constructor(private readonly deps: IdentityAdminDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  static create(deps: IdentityAdminDeps): IdentityAdmin {
    return new IdentityAdmin(deps);
  }

  /** An invited vendor starts on minimal (docs/api.md#limits); a house or the operator on standard unless told. */
  async createOrganisation(input: { name: string; kind: 'house' | 'vendor' | 'operator'; quota?: QuotaSetting; id?: string }): Promise<string> {
    const id = input.id ?? newId('o');
    const quota = input.quota ?? { tier: input.kind === 'vendor' ? 'minimal' : 'standard' };
    await this.deps.db('organisations').insert({ id, name: input.name, kind: input.kind, ...quotaColumns(quota), created_at: this.now() });
    return id;
  }

  /** Without a quota the workspace gets its organisation's: the tier the operator set when approving it. */
  async createWorkspace(input: { organisationId: string; name: string; quota?: QuotaSetting; id?: string }): Promise<string> {
    const id = input.id ?? newId('w');
    await this.deps.db.transaction(async (trx) => {
      const organisation = await countHeldUnderLock(trx, input.organisationId, { holder: 'organisations', table: 'workspaces', column: 'organisation_id' });
      if (!organisation) throw new TenancyNotFoundError('organisation', input.organisationId);
      if (organisation.held >= WORKSPACES_PER_ORGANISATION_MAX) {
        throw new TenancyFullError(`an organisation holds at most ${WORKSPACES_PER_ORGANISATION_MAX} workspaces`);
      }
      const { quota_tier, custom_per_second, custom_burst, custom_per_day } = organisation.holder;
      const quota = input.quota ? quotaColumns(input.quota) : { quota_tier, custom_per_second, custom_burst, custom_per_day };
      await trx('workspaces').insert({ id, organisation_id: input.organisationId, name: input.name, ...quota, created_at: this.now() });
    });
    return id;
  }

  /**
   * Sets a workspace's quota (its house's connections) or an organisation's (its connections in other
   * houses' workspaces). Quotas are read per request, so the next request of every existing connection
   * gets the new allowance, with no new credentials.
   */
  async setQuota(scope: QuotaScope, id: string, quota: QuotaSetting): Promise<void> {
    const changed = await this.deps
      .db(scope === 'organisation' ? 'organisations' : 'workspaces')
      .where({ id })
      .update(quotaColumns(quota));
    if (changed === 0) throw new TenancyNotFoundError(scope, id);
    await this.announce({ type: 'quota.changed', scope, id, at: this.now().toISOString() });
  }

  /** The app's organisation is the workspace's house unless it names a vendor, whose quota its connections then use. */
  async createApp(input: { workspaceId: string; organisationId?: string; name: string; id?: string }): Promise<string> {
    const id = input.id ?? newId('a');
    await this.deps.db.transaction(async (trx) => {
      const workspace = await countHeldUnderLock(trx, input.workspaceId, { holder: 'workspaces', table: 'apps', column: 'workspace_id' });
      if (!workspace) throw new TenancyNotFoundError('workspace', input.workspaceId);
      if (workspace.held >= APPS_PER_WORKSPACE_MAX) throw new TenancyFullError(`a workspace holds at most ${APPS_PER_WORKSPACE_MAX} apps`);
      // The workspace's own organisation exists (its foreign key); another one (a vendor) is looked up.
      const organisationId = input.organisationId ?? workspace.holder.organisation_id;
      if (organisationId !== workspace.holder.organisation_id) await this.requireRoomInOtherWorkspaces(trx, organisationId, input.workspaceId);
      await trx('apps').insert({ id, workspace_id: input.workspaceId, organisation_id: organisationId, name: input.name, created_at: this.now() });
    });
    return id;
  }

  /**
   * An app owned by another organisation than the workspace's (a vendor's) adds the workspace to that
   * organisation's page, so an organisation has apps in at most OTHER_WORKSPACES_PER_ORGANISATION_MAX
   * workspaces of others: counted with its row locked (FOR NO KEY UPDATE), so two creations at once
   * cannot pass the bound together.
   */
  private async requireRoomInOtherWorkspaces(trx: Knex.Transaction, organisationId: string, workspaceId: string): Promise<void> {
    const owner = await trx('organisations').where({ id: organisationId }).forNoKeyUpdate().first<{ kind: string } | undefined>('kind');
    if (!owner) throw new TenancyNotFoundError('organisation', organisationId);
    // Only a vendor builds apps for other organisations' workspaces; a house owns apps in its own only.
    if (owner.kind !== 'vendor') throw new AppOwnerNotVendorError("an app of another organisation than the workspace's must be owned by a vendor");
    const others = await trx('apps as a')
      .join('workspaces as w', 'w.id', 'a.workspace_id')
      .where('a.organisation_id', organisationId)
      .whereNot('w.organisation_id', organisationId)
      .distinct('a.workspace_id')
      .pluck('a.workspace_id');
    if (!others.includes(workspaceId) && others.length >= OTHER_WORKSPACES_PER_ORGANISATION_MAX) {
      throw new TenancyFullError(`an organisation has apps in at most ${OTHER_WORKSPACES_PER_ORGANISATION_MAX} workspaces of other organisations`);
    }
  }

  /** Replaces what the app may publish. */
  async setPermissions(appId: string, permissions: { systemIds: readonly string[]; messageTypes: readonly string[] }): Promise<void> {
    await this.deps.db.transaction(async (trx) => {
      const app = await trx('apps').where({ id: appId }).forUpdate().first('id');
      if (!app) throw new AppNotFoundError(appId);
      await trx('permissions').where({ app_id: appId }).delete();
      const rows = [
        ...permissions.systemIds.map((value) => ({ app_id: appId, kind: 'system_id' as const, value })),
        ...permissions.messageTypes.map((value) => ({ app_id: appId, kind: 'message_type' as const, value })),
      ];
      if (rows.length > 0) await trx('permissions').insert(rows);
    });
    await this.announce({ type: 'app.changed', app_id: appId, at: this.now().toISOString() });
  }

  /** A new connection of the app with credential version 1; the secret is returned once. */
  async createConnection(input: { appId: string; kind: ConnectionKind } & ConnectionAbout): Promise<IssuedCredential> {
    const clientId = newId('c');
    const clientSecret = newClientSecret();
    const now = this.now();
    await this.deps.db.transaction(async (trx) => {
      const app = await trx('apps').where({ id: input.appId }).first('workspace_id');
      if (!app) throw new AppNotFoundError(input.appId);
      const workspace = await countHeldUnderLock(
        trx,
        app.workspace_id,
        { holder: 'workspaces', table: 'connections', column: 'workspace_id' },
        { status: 'removed' },
      );
      if (workspace && workspace.held >= CONNECTIONS_PER_WORKSPACE_MAX) {
        throw new TenancyFullError(`a workspace holds at most ${CONNECTIONS_PER_WORKSPACE_MAX} connections that are not removed: remove revoked ones first`);
      }
      await trx('connections').insert({
        id: clientId,
        app_id: input.appId,
        workspace_id: app.workspace_id,
        kind: input.kind,
        status: 'active',
        credential_version: 1,
        created_at: now,
        name: input.name ?? '',
        description: input.description ?? '',
      });
      await trx('credentials').insert({ connection_id: clientId, version: 1, secret_hash: hashSecret(clientSecret), created_at: now });
    });
    await this.announceConnection(clientId, 'created');
    return { clientId, clientSecret, credentialVersion: 1 };
  }

  /**
   * Replaces what people call the connection (both parts). Nothing that authenticates reads them, so
   * no control event follows. A revoked or removed connection can still be renamed: it is still listed.
   */
  async describeConnection(clientId: string, about: Required<ConnectionAbout>): Promise<void> {
    const changed = await this.deps.db('connections').where({ id: clientId }).update({ name: about.name, description: about.description });
    if (changed === 0) throw new ConnectionNotFoundError(clientId);
  }

  /**
   * A new secret with the next credential version. Tokens of earlier versions stop working at once
   * (within the propagation time); the previous secret keeps obtaining tokens for `overlapSeconds`,
   * and every older one stops at once, even inside the overlap an earlier rotation gave it.
   */
  async rotateCredential(clientId: string, opts: { overlapSeconds: number }): Promise<IssuedCredential & { previousUsableUntil: Date }> {
    if (!Number.isInteger(opts.overlapSeconds) || opts.overlapSeconds < 0 || opts.overlapSeconds > MAX_OVERLAP_SECONDS) {
      throw new OverlapWindowError(`the overlap must be a whole number of seconds from 0 to ${MAX_OVERLAP_SECONDS}`);
    }
    const clientSecret = newClientSecret();
    const now = this.now();
    const previousUsableUntil = new Date(now.getTime() + opts.overlapSeconds * 1000);
    const version = await this.deps.db.transaction(async (trx) => {
      const row = await trx('connections').where({ id: clientId }).forUpdate().first('status', 'credential_version');
      if (!row) throw new ConnectionNotFoundError(clientId);
      if (row.status !== 'active') throw new ConnectionNotActiveError(clientId, row.status);
      const next = row.credential_version + 1;
      // Only the secret this rotation replaces keeps an overlap (docs/api.md#connections-and-credentials): one that an earlier
      // rotation left usable for a while ends now, whatever its own window said.
      await trx('credentials').where({ connection_id: clientId }).where('usable_until', '>', now).update({ usable_until: now });
      await trx('credentials').where({ connection_id: clientId }).whereNull('usable_until').update({ usable_until: previousUsableUntil });
      await trx('credentials').insert({ connection_id: clientId, version: next, secret_hash: hashSecret(clientSecret), created_at: now });
      await trx('connections').where({ id: clientId }).update({ credential_version: next });
      return next;
    });
    await this.announceConnection(clientId, 'rotated');
    return { clientId, clientSecret, credentialVersion: version, previousUsableUntil };
  }

  /** The connection stops working: no new tokens, and its tokens are refused (403 producer.not_registered). */
  async revokeConnection(clientId: string): Promise<void> {
    await this.setStatus(clientId, 'revoked');
    await this.announceConnection(clientId, 'revoked');
  }

  /** Like revoke, and every secret hash is deleted: the connection can never come back. */
  async removeConnection(clientId: string): Promise<void> {
    await this.deps.db.transaction(async (trx) => {
      const changed = await trx('connections').where({ id: clientId }).update({ status: 'removed', status_changed_at: this.now() });
      if (changed === 0) throw new ConnectionNotFoundError(clientId);
      await trx('credentials').where({ connection_id: clientId }).delete();
    });
    await this.announceConnection(clientId, 'removed');
  }

  /**
   * Registers an external identity provider; the caller checked its settings (externalIssuerProblems).
   * An issuer registered already is ProviderConflictError.
   */
  async createProvider(settings: ExternalIssuer): Promise<string> {
    const id = newId('i');
    try {
      await this.deps.db.transaction(async (trx) => {
        // Registrations one at a time (reads go on), so two at once cannot pass the bound together.
        await trx.raw('LOCK TABLE identity_providers IN SHARE ROW EXCLUSIVE MODE');
        const [counted] = await trx('identity_providers').count({ n: '*' });
        if (Number(counted?.n ?? 0) >= PROVIDERS_MAX) {
          throw new ProviderConflictError(`a deployment registers at most ${PROVIDERS_MAX} identity providers: remove one first`);
        }
        await trx('identity_providers').insert({
          id,
          issuer: settings.issuer,
          jwks_url: settings.jwksUrl,
          audiences: [...settings.audiences],
          algorithms: [...settings.algorithms],
          client_claim: settings.clientClaim,
          clock_tolerance_seconds: settings.clockToleranceSeconds,
          created_at: this.now(),
        });
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new ProviderConflictError(`an identity provider with issuer ${settings.issuer} is registered already`);
      throw err;
    }
    await this.announce({ type: 'provider.changed', provider_id: id, issuer: settings.issuer, at: this.now().toISOString() });
    return id;
  }

  /** Removes the provider and its bindings: its tokens are refused on every process within the propagation time. */
  async removeProvider(providerId: string): Promise<void> {
    const removed = await this.deps.db('identity_providers').where({ id: providerId }).delete().returning('issuer');
    const issuer = removed[0]?.issuer;
    if (issuer === undefined) throw new ProviderNotFoundError('identity provider', providerId);
    await this.announce({ type: 'provider.changed', provider_id: providerId, issuer, at: this.now().toISOString() });
  }

  /** Binds the provider's client `client` to a connection (one connection per client; a producer's, to publish). */
  async createBinding(input: { providerId: string; client: string; connectionId: string }): Promise<string> {
    const id = newId('b');
    await this.deps.db.transaction(async (trx) => {
      if (!(await trx('identity_providers').where({ id: input.providerId }).first('id')))
        throw new ProviderNotFoundError('identity provider', input.providerId);
      const connection = await countHeldUnderLock(trx, input.connectionId, { holder: 'connections', table: 'identity_bindings', column: 'connection_id' });
      if (!connection) throw new ConnectionNotFoundError(input.connectionId);
      if (connection.holder.status !== 'active') throw new ConnectionNotActiveError(input.connectionId, connection.holder.status);
      if (connection.held >= BINDINGS_PER_CONNECTION_MAX) {
        throw new ProviderConflictError(`a connection holds at most ${BINDINGS_PER_CONNECTION_MAX} identity provider bindings: remove one first`);
      }
      if (await trx('identity_bindings').where({ provider_id: input.providerId, client_value: input.client }).first('id')) {
        throw new ProviderConflictError(`client ${input.client} of this provider is bound already; remove that binding first`);
      }
      await trx('identity_bindings').insert({
        id,
        provider_id: input.providerId,
        client_value: input.client,
        connection_id: input.connectionId,
        created_at: this.now(),
      });
    });
    await this.announce({ type: 'binding.changed', provider_id: input.providerId, client: input.client, at: this.now().toISOString() });
    return id;
  }

  async removeBinding(providerId: string, bindingId: string): Promise<void> {
    const removed = await this.deps.db('identity_bindings').where({ id: bindingId, provider_id: providerId }).delete().returning('client_value');
    const client = removed[0]?.client_value;
    if (client === undefined) throw new ProviderNotFoundError('binding', bindingId);
    await this.announce({ type: 'binding.changed', provider_id: providerId, client, at: this.now().toISOString() });
  }

  /**
   * A consumer connection's testing settings (fault injection, dead-letter threshold; docs/testing-tools.md):
   * the parts given replace the stored ones. Announced like any connection change, since the pull API
   * reads them with the connection.
   */
  async setConsumerTools(clientId: string, change: Partial<ConsumerTools>): Promise<ConsumerTools | null> {
    const tools = await writeConsumerTools(this.deps.db, clientId, change);
    await this.announceConnection(clientId, 'tools');
    return tools;
  }

  private async setStatus(clientId: string, status: 'revoked'): Promise<void> {
    const changed = await this.deps.db('connections').where({ id: clientId }).whereNot({ status: 'removed' }).update({ status, status_changed_at: this.now() });
    if (changed === 0) throw new ConnectionNotFoundError(clientId);
  }

  private announceConnection(clientId: string, change: ConnectionChange): Promise<void> {
    return this.announce({ type: 'connection.changed', connection_id: clientId, change, at: this.now().toISOString() });
  }

  private async announce(event: ControlEvent): Promise<void> {
    try {
      await this.deps.control.publish(event);
    } catch (err) {
      this.deps.logger.warn({ err, event: event.type }, 'control event not published; caches catch up within their TTL');
    }
  }
}

function quotaColumns(quota: QuotaSetting): Written<'organisations' | 'workspaces'> {
  return quota.tier === 'custom'
    ? { quota_tier: 'custom', custom_per_second: quota.perSecond, custom_burst: quota.burst, custom_per_day: quota.perDay }
    : { quota_tier: quota.tier, custom_per_second: null, custom_burst: null, custom_per_day: null };
}
