import { createRouter, cacheableJson, MessageTooLargeError, readBody, sendCacheable, type ReadinessCheck, type Service } from '@bus/http';
import { createLimiter, enforce, type LimitMetrics, type LimitSpec, type Redis } from '@bus/limits';
import { openapi } from '@bus/schemas';
import { checkSkillsInput, loadSkillLibrary, MAX_BODY_BYTES, readSkillsBody, type SkillLibrary } from '@bus/skills';
import { SkillsUnreadableError, SkillsVersionUnknownError } from './errors';

export interface CatalogueServiceDeps {
  /**
   * The Redis of the route limits, shared by every replica so a limit holds across all callers. Its
   * key prefix (REDIS_KEY_PREFIX) separates deployments, and test runs, that share one Redis.
   */
  redis: Redis;
  /** What the service needs to be ready: the Redis check, from the composition root. */
  readiness: ReadinessCheck[];
  /** The carried library versions; the data of @bus/schemas when left out. */
  library?: SkillLibrary;
  /** The process's limiter counters (bus_rate_limited_total, bus_rate_limiter_fallback_total). */
  limitMetrics?: LimitMetrics;
}

/**
 * The route limits of docs/api.md#limits, across all callers together: "10 a second, bursts of 20" is 10 per
 * second plus a burst allowance of 10 per 10 seconds used once the second's 10 are spent.
 */
export const CATALOGUE_LIMITS = {
  library: { name: 'catalogue.library', label: 'skills_library', rate: { points: 10, durationSeconds: 1 }, burst: { points: 10, durationSeconds: 10 } },
  validate: { name: 'catalogue.validate', label: 'skills_validate', rate: { points: 5, durationSeconds: 1 }, burst: { points: 5, durationSeconds: 10 } },
} as const satisfies Record<string, LimitSpec>;

/** The library answer may be cached for five minutes (docs/api.md#skill-catalogue, #limits). */
const LIBRARY_CACHE = 'public, max-age=300';
/** All callers share one count (docs/api.md#limits), so every request consumes from this one key. */
const ALL_CALLERS = 'all';

/**
 * Skill catalogue API on the portal host (docs/api.md#skill-library, #skill-catalogue, #errors): no authentication, nothing stored.
 * GET /api/skills/library, POST /api/skills/validate, and GET /api/skills/openapi.json.
 */
export function createCatalogueService(deps: CatalogueServiceDeps): Service {
  const library = deps.library ?? loadSkillLibrary();
  const libraryLimit = createLimiter(deps.redis, CATALOGUE_LIMITS.library, deps.limitMetrics);
  const validateLimit = createLimiter(deps.redis, CATALOGUE_LIMITS.validate, deps.limitMetrics);

  // The answers never change while the process runs: serialise and tag each version once.
  const answers = new Map(library.versions.map((v) => [v.info.version, cacheableJson(library.answer(v.info.version))] as const));
  const document = cacheableJson(openapi.catalogue);
  const carried = library.versions.map((v) => v.info.version);

  const router = createRouter();
  router.get('/api/skills/library', async (req, res) => {
    await enforce([[libraryLimit, ALL_CALLERS]], 'Too many library requests');
    const asked = req.query.version ?? library.current.info.version;
    const answer = typeof asked === 'string' ? answers.get(asked) : undefined;
    if (!answer) throw new SkillsVersionUnknownError(JSON.stringify(asked).slice(0, 80), carried);
    sendCacheable(req, res, answer, LIBRARY_CACHE);
  });

  router.post('/api/skills/validate', async (req, res) => {
    await enforce([[validateLimit, ALL_CALLERS]], 'Too many validation requests');
    const body = await readBody(req, MAX_BODY_BYTES).catch((err: unknown) => {
      if (err instanceof MessageTooLargeError) throw new SkillsUnreadableError(`The body is over ${MAX_BODY_BYTES} bytes (256 KB)`);
      throw err;
    });
    // The body lives only in this request: checked, answered, never stored or logged.
    const read = readSkillsBody(body, req.header('content-type'));
    if (!read.ok) throw new SkillsUnreadableError(read.reason);
    res.set('Cache-Control', 'no-store').json(checkSkillsInput(library, read.input));
  });

  router.get('/api/skills/openapi.json', (req, res) => {
    sendCacheable(req, res, document, LIBRARY_CACHE);
  });

  return { name: 'catalogue', routers: [router], readiness: deps.readiness };
}
