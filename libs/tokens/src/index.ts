export { CLIENT_ID_PATTERN, CLIENT_SECRET_PATTERN, SECRET_PREFIX, newId, newClientId, newClientSecret, isClientId } from './ids';
export { hashSecret, secretMatches } from './secrets';
export { ACCESS_TOKEN_TTL_SECONDS, TOKEN_ENVIRONMENT, CLAIM_NAMES, BaseUrlError, audienceFor, buildClaims } from './claims';
export type { AccessTokenClaims, TokenAudience, ClaimsInput } from './claims';
export {
  SigningKeyError,
  PRE_PUBLISH_MS,
  POST_RETIRE_MS,
  generateSigningKey,
  thumbprint,
  importPublicJwk,
  encryptPrivateKey,
  decryptPrivateKey,
  signingKeyAt,
  publishedKeysAt,
  planRotation,
} from './keys';
export type { PublicJwk, GeneratedSigningKey, SigningKeyLifecycle, RotationPlan } from './keys';
export { signAccessToken } from './sign';
export { authorizationServerMetadata, metadataPaths } from './metadata';
export type { AuthorizationServerMetadata } from './metadata';
export { verifyAccessToken } from './verify';
export type { VerifyOptions } from './verify';
export { authorizeBearer, authorizeConnection } from './authorize';
export type { ConnectionState, ConnectionKind, ConnectionStatus, BearerRequirement } from './authorize';
export { BearerRefusal, TokenRejectedError, NotRegisteredError, TenantMismatchError } from './refusals';
export type { UnauthenticatedReason } from './refusals';
export { seal, unseal, SealingError } from './sealing';
export { ACCESS_KEY_ID_PATTERN, ROLE_ARN_PATTERN, CHALLENGE_PATTERN, newAccessKeyId, newSecretAccessKey, newChallenge } from './principals';
export {
  SIGV4_ALGORITHM,
  UNSIGNED_PAYLOAD,
  EMPTY_PAYLOAD_HASH,
  SigV4Refusal,
  parseSignature,
  payloadHashOf,
  canonicalRequest,
  stringToSign,
  signatureMatches,
} from './sigv4';
export type { SigV4Reason, SigV4Request, SigV4Scope, ParsedSignature } from './sigv4';
