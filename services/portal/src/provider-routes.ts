import type { Router, Request } from 'express';
import { createRouter, unavailableOnAnyFailure, type RequestValidation } from '@bus/http';
import { KnexProviderStore, type BindingRecord, type IdentityAdmin, type ProviderRecord } from '@bus/identity';
import type { Knex } from '@bus/db';
import {
  DEFAULT_CLOCK_TOLERANCE_SECONDS,
  DEFAULT_EXTERNAL_ALGORITHMS,
  externalIssuerProblems,
  type ClientClaim,
  type ExternalAlgorithm,
  type ExternalIssuer,
} from '@bus/tokens';
import { identityCall, listPage } from './admin-routes';
import { AdminNotFoundError, AdminRequestInvalidError, AdminUnavailableError } from './errors';

export interface ProviderRoutesDeps {
  db: Knex;
  admin: IdentityAdmin;
  requests: RequestValidation;
  /** IDENTITY_PROVIDER_ALLOW_HTTP_LOOPBACK: an http JWKS URL to a loopback host is accepted (tests only). */
  allowHttpLoopback: boolean;
}

/** #/components/schemas/IdentityProviderCreate */
interface ProviderCreate {
  issuer: string;
  jwks_url: string;
  audiences: string[];
  algorithms?: ExternalAlgorithm[];
  client_claim: ClientClaim;
  clock_tolerance_seconds?: number;
}

/** #/components/schemas/BindingCreate */
interface BindingCreate {
  client: string;
  connection_id: string;
}

const BODY_BYTES = 16 * 1024;

/**
 * External identity providers and their bindings (docs/admin.md "Identity providers"),
 * under /api/admin behind the operator's credentials like every admin route. Each change is
 * announced on the control topic, so every process's identity cache drops it within ~2 s.
 */
export function providerRoutes(deps: ProviderRoutesDeps): Router {
  const store = providerStore(deps.db);
  const bindings = bindingOperations({ db: deps.db, admin: deps.admin });
  const router = createRouter();
  const providerOf = async (id: string) => (await store.provider(id)) ?? notFound('identity provider', id);

  router.get('/api/admin/identity-providers', async (_req, res) => {
    res.json({ identity_providers: (await store.providers()).map(providerView) });
  });
  router.post('/api/admin/identity-providers', async (req, res) => {
    const b = (await deps.requests.jsonBody(req, BODY_BYTES)) as ProviderCreate;
    const settings: ExternalIssuer = {
      issuer: b.issuer,
      jwksUrl: b.jwks_url,
      audiences: b.audiences,
      algorithms: b.algorithms ?? DEFAULT_EXTERNAL_ALGORITHMS,
      clientClaim: b.client_claim,
      clockToleranceSeconds: b.clock_tolerance_seconds ?? DEFAULT_CLOCK_TOLERANCE_SECONDS,
    };
    const problems = externalIssuerProblems(settings, { allowHttpLoopback: deps.allowHttpLoopback });
    if (problems.length > 0) throw new AdminRequestInvalidError(problems.join('; '));
    const id = await identityCall(() => deps.admin.createProvider(settings));
    res
      .status(201)
      .location(`/api/admin/identity-providers/${id}`)
      .json(providerView(await providerOf(id)));
  });
  router.get('/api/admin/identity-providers/:i', async (req, res) => {
    res.json(providerView(await providerOf(param(req, 'i'))));
  });
  router.delete('/api/admin/identity-providers/:i', async (req, res) => {
    await identityCall(() => deps.admin.removeProvider(param(req, 'i')));
    res.status(204).end();
  });

  router.get('/api/admin/identity-providers/:i/bindings', async (req, res) => {
    const provider = await providerOf(param(req, 'i'));
    res.json(
      await listPage(req, 'bindings', {
        list: async (_req, page) => (await store.bindings(provider.id, page)).map(bindingView),
        idOf: (binding) => binding.id,
        find: async (id) => (await store.bindingById(provider.id, id)) ?? undefined,
      }),
    );
  });
  router.post('/api/admin/identity-providers/:i/bindings', async (req, res) => {
    const b = (await deps.requests.jsonBody(req, BODY_BYTES)) as BindingCreate;
    res.status(201).json(await bindings.create({ providerId: param(req, 'i'), client: b.client, connectionId: b.connection_id }));
  });
  router.delete('/api/admin/identity-providers/:i/bindings/:b', async (req, res) => {
    await bindings.remove(param(req, 'i'), param(req, 'b'));
    res.status(204).end();
  });
  return router;
}

/** The provider tables' reads; Postgres failing is the documented 503 admin.unavailable. */
function providerStore(db: Knex): KnexProviderStore {
  return unavailableOnAnyFailure(KnexProviderStore.create(db), (cause) => new AdminUnavailableError(cause));
}

export type BindingView = ReturnType<typeof bindingView>;
export type ProviderView = ReturnType<typeof providerView>;

/**
 * Bindings as the admin API and the portal for people both change them (the portal's are a
 * connection's; the providers themselves stay the operator's). Each change is announced on the
 * control topic by IdentityAdmin.
 */
export interface BindingOperations {
  /** The registered providers, for a person to pick one to bind. */
  providers(): Promise<ProviderView[]>;
  ofConnection(connectionId: string): Promise<BindingView[]>;
  create(input: { providerId: string; client: string; connectionId: string }): Promise<BindingView>;
  remove(providerId: string, bindingId: string): Promise<void>;
}

export function bindingOperations(deps: { db: Knex; admin: IdentityAdmin }): BindingOperations {
  const store = providerStore(deps.db);
  return {
    providers: async () => (await store.providers()).map(providerView),
    ofConnection: async (connectionId) => (await store.connectionBindings(connectionId)).map(bindingView),
    create: async (input) => {
      await identityCall(() => deps.admin.createBinding(input));
      return bindingView((await store.binding(input.providerId, input.client)) ?? notFound('binding', input.client));
    },
    remove: (providerId, bindingId) => identityCall(() => deps.admin.removeBinding(providerId, bindingId)),
  };
}

function providerView(p: ProviderRecord) {
  return {
    id: p.id,
    issuer: p.issuer,
    jwks_url: p.jwksUrl,
    audiences: [...p.audiences],
    algorithms: [...p.algorithms],
    client_claim: p.clientClaim,
    clock_tolerance_seconds: p.clockToleranceSeconds,
    created_at: p.createdAt.toISOString(),
  };
}

function bindingView(b: BindingRecord) {
  return { id: b.id, provider_id: b.providerId, client: b.client, connection_id: b.connectionId, created_at: b.createdAt.toISOString() };
}

function param(req: Request, name: string): string {
  return String(req.params[name]);
}

function notFound(what: string, id: string): never {
  throw new AdminNotFoundError(what, id);
}
