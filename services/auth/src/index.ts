export { authServiceOf, createAuthService, TOKEN_LIMITS, TOKEN_BODY_LIMIT, KeySetUnavailableError } from './service';
export type { AuthServiceDeps, TokenLimits } from './service';
export { authConfig } from './config';
export { SigningKeys, NoSigningKeyError } from './signing-keys';
