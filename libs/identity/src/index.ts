export { KnexIdentityStore, readSigningKeys } from './store';
export type { IdentityStore, ConnectionRecord, CredentialRecord, PublishedKey, StoredSigningKey } from './store';
export { ConnectionCache, KeySetCache, ReadThroughCache, VerifiedTokenCache, MAX_CACHE_TTL_MS, CacheTtlError } from './cache';
export { createBearerAuthenticator, BearerRefusedError, RegistryUnavailableError, unavailableOnFailure } from './authenticate';
export type { BearerAuthenticator, BearerAuthenticatorDeps, BearerIdentity } from './authenticate';
export { createControlPublisher, createControlListener, parseControlEvent, controlKey, ControlEventError } from './control';
export type { ControlEvent, ControlPublisher, ControlListener, QuotaScope } from './control';
export {
  IdentityAdmin,
  AppNotFoundError,
  ConnectionNotFoundError,
  ConnectionNotActiveError,
  OverlapWindowError,
  TenancyNotFoundError,
  MAX_OVERLAP_SECONDS,
} from './admin';
export type { IdentityAdminDeps, IssuedCredential, QuotaSetting } from './admin';
export { createIdentity } from './identity';
export type { Identity, IdentityDeps, StaleKeys } from './identity';
export { identityConfig, busBaseUrlConfig } from './config';
export { KnexQuotaStore, connectionQuota, quotaOfColumns } from './quota';
export type { QuotaStore, ConnectionQuotaDeps, QuotaColumns } from './quota';
