export { KnexIdentityStore, readSigningKeys } from './store';
export type { IdentityStore, ConnectionRecord, CredentialRecord, PublishedKey, StoredSigningKey } from './store';
export { ConnectionCache, KeySetCache, ReadThroughCache, VerifiedTokenCache, MAX_CACHE_TTL_MS, CacheTtlError } from './cache';
export {
  createBearerAuthenticator,
  BearerRefusedError,
  RegistryUnavailableError,
  unavailableOnFailure,
  bearerTokenOf,
  connectionIdentity,
} from './authenticate';
export type { BearerAuthenticator, BearerAuthenticatorDeps, BearerIdentity, BoundClients, ConnectionIdentity, VerifiedBearerTokens } from './authenticate';
export { KnexProviderStore, ExternalTokenVerifier, IdentityProviderUnavailableError, createBoundClients, bindingKey } from './providers';
export type { ProviderStore, ProviderRecord, BindingRecord, RemoteKeySetOptions } from './providers';
export { createControlPublisher, createControlListener, parseControlEvent, controlKey, ControlEventError } from './control';
export type { ControlEvent, ControlPublisher, ControlListener, QuotaScope } from './control';
export {
  IdentityAdmin,
  AppNotFoundError,
  IdentityAdminError,
  IdentityNotFoundError,
  ConnectionNotFoundError,
  ConnectionNotActiveError,
  OverlapWindowError,
  ProviderConflictError,
  PROVIDERS_MAX,
  TenancyFullError,
  WORKSPACES_PER_ORGANISATION_MAX,
  APPS_PER_WORKSPACE_MAX,
  CONNECTIONS_PER_WORKSPACE_MAX,
  OTHER_WORKSPACES_PER_ORGANISATION_MAX,
  BINDINGS_PER_CONNECTION_MAX,
  ProviderNotFoundError,
  TenancyNotFoundError,
  MAX_OVERLAP_SECONDS,
} from './admin';
export type { ConnectionAbout, IdentityAdminDeps, IssuedCredential, QuotaSetting } from './admin';
export { createIdentity } from './identity';
export { createConnectionUse, LAST_USED_PRECISION_MS } from './connection-use';
export type { ConnectionUse, ConnectionUseDeps } from './connection-use';
export type { Identity, IdentityDeps, StaleKeys } from './identity';
export { identityConfig, busBaseUrlConfig, identityProviderConfig, encryptionKeyConfig, sigv4Config } from './config';
export { KnexQuotaStore, connectionQuota, hostLimitsWithQuota, quotaOfColumns } from './quota';
export type { QuotaStore, ConnectionQuotaDeps, QuotaColumns } from './quota';
export {
  PrincipalStore,
  PrincipalNotFoundError,
  PrincipalNotPendingError,
  PrincipalsFullError,
  PRINCIPALS_PER_CONNECTION_MAX,
  CHALLENGE_TTL_MS,
} from './principals';
export type { PrincipalStatus, PrincipalView, SigningPrincipal, PrincipalStoreDeps } from './principals';
export { createSigV4Verifier, signedRequestLimit, signedRouteSteps, SignatureRefusedError } from './sigv4';
export type { SigV4Verifier, SigV4VerifierDeps, SignedRequest, SignedRequestLimitConfig, SignedRouteSteps, SigningKey } from './sigv4';
