import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { readBasicAuthorization } from '@bus/http';
import { enforce, sourceAddress, type Limiter } from '@bus/limits';
import { OperatorUnauthorizedError } from './errors';

export interface OperatorCredentials {
  clientId: string;
  clientSecret: string;
}

/**
 * HTTP Basic with the operator's client id and secret from config (OPERATOR_CLIENT_ID,
 * OPERATOR_CLIENT_SECRET) — never a bus token. The per-address limit is consumed before the
 * credentials are looked at, so guessing is as slow as the limit. Compared as SHA-256 digests with
 * timingSafeEqual: equal lengths whatever was sent, and no early exit on the first differing byte.
 */
export function operatorAuth(operator: OperatorCredentials, perAddress: Limiter) {
  const expectedId = digest(operator.clientId);
  const expectedSecret = digest(operator.clientSecret);
  return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
    await enforce([[perAddress, sourceAddress(req)]], 'Too many admin requests from this address');
    const presented = basicCredentials(req.header('authorization'));
    // Both comparisons always run, so a right id with a wrong secret takes as long as a wrong id.
    const idMatches = presented !== undefined && timingSafeEqual(digest(presented.id), expectedId);
    const secretMatches = presented !== undefined && timingSafeEqual(digest(presented.secret), expectedSecret);
    if (!idMatches || !secretMatches) throw new OperatorUnauthorizedError();
    next();
  };
}

function basicCredentials(header: string | undefined): { id: string; secret: string } | undefined {
  const basic = readBasicAuthorization(header);
  return basic.kind === 'basic' ? { id: basic.userId, secret: basic.password } : undefined;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
