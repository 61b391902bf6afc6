import type { IdentityStore } from '@bus/identity';
import {
  ACCESS_TOKEN_TTL_SECONDS,
  buildClaims,
  hashSecret,
  isClientId,
  newClientSecret,
  secretMatches,
  signAccessToken,
  type TokenAudience,
} from '@bus/tokens';
import type { Logger } from 'pino';
import type { SigningKeys } from './signing-keys';
import { InvalidClientError, TemporarilyUnavailableError, type ClientCredentials } from './token-request';

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
}

/** Compared against when the client is unknown, so an unknown client costs what a wrong secret costs. */
const DECOY_HASH = hashSecret(newClientSecret());

export interface TokenIssuerDeps {
  store: IdentityStore;
  keys: SigningKeys;
  audience: TokenAudience;
  logger: Logger;
  now: () => Date;
}

/**
 * The client-credentials grant: unknown client, wrong secret, a previous secret after its overlap,
 * a connection that is not active, a client of another environment (its own database: unknown
 * here) all give the same invalid_client. Store or signing failures give temporarily_unavailable.
 */
export function createTokenIssuer(deps: TokenIssuerDeps) {
  return async function issue(credentials: ClientCredentials): Promise<TokenResponse> {
    const refused = () => new InvalidClientError();
    if (!isClientId(credentials.clientId)) {
      secretMatches(credentials.clientSecret, DECOY_HASH);
      throw refused();
    }
    let connection;
    let secrets;
    try {
      [connection, secrets] = await Promise.all([deps.store.connection(credentials.clientId), deps.store.credentials(credentials.clientId)]);
    } catch (err) {
      deps.logger.error({ err }, 'credentials could not be read');
      throw new TemporarilyUnavailableError();
    }
    const now = deps.now();
    const usable = secrets.filter((c) => c.usableUntil === null || c.usableUntil.getTime() > now.getTime());
    // Every usable hash is compared (no early exit), and a decoy when there is none.
    let matched = false;
    for (const c of usable.length > 0 ? usable : [{ secretHash: DECOY_HASH }]) {
      if (secretMatches(credentials.clientSecret, c.secretHash) && usable.length > 0) matched = true;
    }
    if (!connection || connection.status !== 'active' || !matched) throw refused();

    // A token always carries the connection's current version, also when the previous secret
    // (within its overlap) obtained it: a token of an earlier version would be refused at once.
    const claims = buildClaims({
      audience: deps.audience,
      clientId: connection.id,
      workspaceId: connection.workspaceId,
      organisationId: connection.organisationId,
      appId: connection.appId,
      credentialVersion: connection.credentialVersion,
      now,
    });
    let accessToken: string;
    try {
      accessToken = await signAccessToken(claims, await deps.keys.current());
    } catch (err) {
      deps.logger.error({ err }, 'token could not be signed');
      throw new TemporarilyUnavailableError();
    }
    return { access_token: accessToken, token_type: 'Bearer', expires_in: ACCESS_TOKEN_TTL_SECONDS };
  };
}
