export { createAuthService, TOKEN_LIMITS, TOKEN_BODY_LIMIT, KeySetUnavailableError } from './service';
export type { AuthServiceDeps, TokenLimits } from './service';
export { authConfig, authDepsOf } from './config';
export { SigningKeys, NoSigningKeyError } from './signing-keys';
