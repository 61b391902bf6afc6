import { randomBytes } from 'node:crypto';

/**
 * An access key id the bus issues to an AWS principal: `AKIA` and 16 characters of [A-Z2-7] (80
 * random bits), 20 characters like AWS's own long-term keys, so SDKs and secret scanners treat it as one.
 */
export const ACCESS_KEY_ID_PATTERN = /^AKIA[A-Z2-7]{16}$/;

/**
 * An IAM role ARN: partition, the 12-digit account, `role/`, an optional path and the role name
 * (IAM's character set, at most 64 characters for the name).
 */
export const ROLE_ARN_PATTERN = /^arn:aws(?:-cn|-us-gov|-iso|-iso-b)?:iam::[0-9]{12}:role\/(?:[\w+=,.@-]+\/){0,16}[\w+=,.@-]{1,64}$/;

/** A verification challenge: `sbc_` + 256 random bits, base64url. Shown once; only its hash is kept. */
export const CHALLENGE_PATTERN = /^sbc_[A-Za-z0-9_-]{43}$/;

const BASE32_UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function newAccessKeyId(): string {
  let out = 'AKIA';
  // 32 divides 256, so a byte modulo 32 is uniform.
  for (const b of randomBytes(16)) out += BASE32_UPPER[b % 32];
  return out;
}

/** A secret access key: 40 characters of base64 (240 random bits), the shape AWS SDKs expect. */
export function newSecretAccessKey(): string {
  return randomBytes(30).toString('base64');
}

export function newChallenge(): string {
  return 'sbc_' + randomBytes(32).toString('base64url');
}
