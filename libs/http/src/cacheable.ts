import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';

/**
 * A JSON answer that clients may cache and revalidate: its exact bytes and a strong ETag over them.
 * The shared app turns express's automatic ETag off (app.ts), so only the routes whose answer is a
 * document worth caching (the OpenAPI documents, the key set, the RFC 8414 metadata, the skill
 * library) carry one, made here.
 */
export interface CacheableJson {
  readonly body: Buffer;
  readonly etag: string;
}

/** Documents fixed for the life of a process (OpenAPI, RFC 8414 metadata) and the key set (docs/api.md#signing-key-set). */
export const DOCUMENT_CACHE_CONTROL = 'public, max-age=300';

/** Serialises `value` once; a fixed document is tagged when the process starts, not per request. */
export function cacheableJson(value: unknown): CacheableJson {
  const body = Buffer.from(JSON.stringify(value), 'utf8');
  return { body, etag: `"${createHash('sha256').update(body).digest('base64url')}"` };
}

/**
 * Answers `answer` with its ETag and `cacheControl`: 304 without a body when the request's
 * If-None-Match names the current tag (RFC 9110 §13.1.2), 200 with the JSON otherwise.
 */
export function sendCacheable(req: Request, res: Response, answer: CacheableJson, cacheControl: string): void {
  res.set({ ETag: answer.etag, 'Cache-Control': cacheControl });
  if (noneMatchHits(req.header('if-none-match'), answer.etag)) {
    res.status(304).end();
    return;
  }
  res.status(200).type('application/json').send(answer.body);
}

/** If-None-Match: `*` or any listed tag, compared weakly (a W/ prefix is ignored), matches. */
function noneMatchHits(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
