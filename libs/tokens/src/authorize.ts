import type { AccessTokenClaims } from './claims';
import { NotRegisteredError, TenantMismatchError, TokenRejectedError } from './refusals';

export type ConnectionKind = 'producer' | 'consumer';
export type ConnectionStatus = 'active' | 'revoked' | 'removed';

/** What the bus currently knows of the connection behind a token (read through a short cache). */
export interface ConnectionState {
  id: string;
  kind: ConnectionKind;
  status: ConnectionStatus;
  credentialVersion: number;
  /** The workspace the connection and its app belong to now. */
  workspaceId: string;
  appId: string;
}

export interface BearerRequirement {
  /** The kind of connection the route serves: producer (publish, validate) or consumer (pull API); undefined: either (test runs). */
  kind?: ConnectionKind;
  /** The path's {t}, when the route has one. */
  tenant?: string;
}

/**
 * docs/api.md#authentication rules 1–4 on a verified token, in order: unknown connection, a token of an earlier
 * credential version, or an app that left the token's workspace → 401 producer.unauthenticated; a
 * connection that is not active or of the wrong kind → 403 producer.not_registered; a path workspace
 * other than the token's → 403 tenant.mismatch. Throws the refusal; returns nothing when allowed.
 */
export function authorizeBearer(claims: AccessTokenClaims, connection: ConnectionState | null, need: BearerRequirement): void {
  if (!connection || connection.id !== claims.sub) throw new TokenRejectedError('unknown_connection');
  if (claims.credential_version !== connection.credentialVersion) throw new TokenRejectedError('credential_version');
  if (connection.workspaceId !== claims.tenant || connection.appId !== claims.app) throw new TokenRejectedError('workspace_left');
  authorizeConnection(connection, need);
}

/**
 * docs/api.md#authentication rules 3–4 on the connection behind an authenticated caller (a bus token's sub, an external
 * provider's bound client, or an AWS signature whose principal is registered on it): not active or of
 * the wrong kind → 403 producer.not_registered; a path workspace other than the connection's → 403
 * tenant.mismatch. `kind` undefined: any kind.
 */
export function authorizeConnection(connection: ConnectionState, need: Partial<BearerRequirement>): void {
  if (connection.status !== 'active') throw new NotRegisteredError('not_active');
  if (need.kind !== undefined && connection.kind !== need.kind) throw new NotRegisteredError('wrong_kind');
  if (need.tenant !== undefined && need.tenant !== connection.workspaceId) throw new TenantMismatchError();
}
