import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';
import { coalesceCalls, HttpError } from '@bus/contracts';
import type { LimitMetrics } from './metrics';

export interface Window {
  points: number;
  durationSeconds: number;
}

export interface LimitSpec {
  /** Names the limit in Redis keys (`limit:<name>:<key>`); stable, it is shared by every replica. */
  name: string;
  /** The limit's label in metrics: one of a bounded set (docs/observability.md), never a key or a date. */
  label: string;
  /** The rule a refusal reports; rate.limited unless this is a daily quota. */
  rule?: 'rate.limited' | 'quota.exceeded';
  /** The sustained rate, e.g. 20 per 1 s. */
  rate: Window;
  /**
   * Extra allowance above the rate, used only once the rate's window is spent, e.g. "bursts of 40"
   * at 20/s = 20 extra per 10 s. Fixed windows, so a burst can straddle two of them.
   */
  burst?: Window;
}

/**
 * An allowed request reports what the limiter's own answer says is left: `remaining` more requests
 * within the next `resetSeconds` (the rest of the rate's window, or of the burst allowance once the
 * rate's window is spent). No extra Redis call: the count is the one the request just made.
 */
export type LimitDecision = { allowed: true; remaining: number; resetSeconds: number } | { allowed: false; retryAfterSeconds: number };

export interface Limiter {
  readonly name: string;
  consume(key: string): Promise<LimitDecision>;
}

/** Limits to count one request against, in order, each with the key it counts (an address, a connection). */
export type LimitChecks = ReadonlyArray<readonly [Limiter, string]>;

/** A window's count after a request: how many it holds now (this one included) and the ms until it resets. */
interface Count {
  consumed: number;
  msBeforeNext: number;
}

/** What consumeInOrder needs of a limiter besides its interface; kept out of the interface. */
interface LimiterParts {
  redis: Redis;
  spec: LimitSpec;
  metrics: LimitMetrics | undefined;
  /** rate-limiter-flexible's windows, each with its in-process insurance: the path without Redis. */
  consumeWithInsurance(key: string): Promise<LimitDecision>;
}

const partsOf = new WeakMap<Limiter, LimiterParts>();

/**
 * A limit shared by every replica through Redis. When Redis is unreachable the in-process insurance
 * limiter (same windows, per replica) decides instead, so requests keep being answered and limited.
 */
export function createLimiter(redis: Redis, spec: LimitSpec, metrics?: LimitMetrics): Limiter {
  const windowed = (suffix: string, w: Window): RateLimiterAbstract =>
    new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `limit:${spec.name}${suffix}`,
      points: w.points,
      duration: w.durationSeconds,
      insuranceLimiter: new RateLimiterMemory({ keyPrefix: `insurance:${spec.name}${suffix}`, points: w.points, duration: w.durationSeconds }),
    });
  const rate = windowed('', spec.rate);
  const burst = spec.burst ? windowed(':burst', spec.burst) : undefined;
  const consumeWithInsurance = async (key: string): Promise<LimitDecision> => {
    const inRate = await counted(rate.consume(key));
    return decisionOf(spec, inRate, inRate.consumed > spec.rate.points && burst ? await counted(burst.consume(key)) : undefined);
  };
  const limiter: Limiter = {
    name: spec.name,
    consume: async (key) => (await consumeInOrder([[limiter, key]]))[0]!,
  };
  partsOf.set(limiter, { redis, spec, metrics, consumeWithInsurance });
  metrics?.declare(spec.label, spec.rule ?? 'rate.limited');
  return limiter;
}

/**
 * The decision of one limit from its windows' counts. The burst allowance is spent only once the
 * rate's window is (as rate-limiter-flexible's BurstyRateLimiter does), composed here so that an
 * allowed burst request knows what is left of it: until the rate's window ends, only what is left of
 * the burst allowance is left.
 */
function decisionOf(spec: LimitSpec, rate: Count, burst: Count | undefined): LimitDecision {
  const seconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000));
  const allowed = (remaining: number): LimitDecision => ({ allowed: true, remaining: Math.max(0, remaining), resetSeconds: seconds(rate.msBeforeNext) });
  const refused = (ms: number): LimitDecision => ({ allowed: false, retryAfterSeconds: Math.max(1, seconds(ms)) });
  if (rate.consumed <= spec.rate.points) return allowed(spec.rate.points - rate.consumed);
  if (!spec.burst || !burst) return refused(rate.msBeforeNext);
  if (burst.consumed <= spec.burst.points) return allowed(spec.burst.points - burst.consumed);
  return refused(Math.min(rate.msBeforeNext, burst.msBeforeNext));
}

/** rate-limiter-flexible rejects with its answer when a window is spent; anything else is a failure. */
async function counted(consumption: Promise<RateLimiterRes>): Promise<Count> {
  const answer = await consumption.catch((rejection: unknown) => {
    if (rejection instanceof RateLimiterRes) return rejection;
    throw rejection;
  });
  return { consumed: answer.consumedPoints, msBeforeNext: answer.msBeforeNext };
}

/**
 * Counts a request against several limits in one Redis round trip, as consuming them one after the
 * other would: each limit's rate window, its burst window only once the rate's is spent, and nothing
 * after the first limit that refuses. Each window is counted as rate-limiter-flexible's RateLimiterRedis
 * counts it (same key, same `set NX EX` / `incrby` / `pttl`), so its insurance path and every replica
 * share the counts. KEYS: per limit its rate key and burst key; ARGV: per limit rate points, rate
 * seconds, burst points (0: none), burst seconds. Answers consumed, pttl per window counted, in order.
 */
const LIMITS_IN_ORDER_LUA = `
local function count(key, seconds)
  redis.call('set', key, 0, 'EX', seconds, 'NX')
  local consumed = redis.call('incrby', key, 1)
  local ttl = redis.call('pttl', key)
  if ttl == -1 then
    redis.call('expire', key, seconds)
    ttl = 1000 * seconds
  end
  return consumed, ttl
end
local answer = {}
for i = 1, #KEYS / 2 do
  local a = (i - 1) * 4
  local consumed, ttl = count(KEYS[2 * i - 1], ARGV[a + 2])
  table.insert(answer, consumed)
  table.insert(answer, ttl)
  if consumed > tonumber(ARGV[a + 1]) then
    if tonumber(ARGV[a + 3]) == 0 then return answer end
    local burstConsumed, burstTtl = count(KEYS[2 * i], ARGV[a + 4])
    table.insert(answer, burstConsumed)
    table.insert(answer, burstTtl)
    if burstConsumed > tonumber(ARGV[a + 3]) then return answer end
  end
end
return answer
`;

type LimitsInOrderCommand = { busLimitsInOrder(numberOfKeys: number, ...keysAndArgs: Array<string | number>): Promise<number[]> };

/**
 * Counts one request against `checks` in order and answers each limit's decision up to the first
 * refusal (the limits after it are neither counted nor answered). One Redis round trip for all of them
 * (a publish: the address and the whole API, then the connection's second and day), where each
 * limiter on its own made one or two; without Redis, each limiter's insurance decides, one by one.
 */
export async function consumeInOrder(checks: LimitChecks): Promise<LimitDecision[]> {
  const limits = checks.map(([limiter, key]) => {
    const parts = partsOf.get(limiter);
    if (!parts) throw new TypeError(`limiter ${limiter.name} was not made by createLimiter`);
    return { parts, key };
  });
  const redis = limits[0]?.parts.redis;
  if (!redis) return [];
  const answer =
    redis.status === 'ready' && limits.every((l) => l.parts.redis === redis)
      ? await countInRedis(
          redis,
          limits.map((l) => ({ spec: l.parts.spec, key: l.key })),
        ).catch(() => undefined)
      : undefined;
  const decisions: LimitDecision[] = [];
  let at = 0;
  for (const { parts, key } of limits) {
    let decision: LimitDecision;
    if (answer) {
      const rate = { consumed: answer[at]!, msBeforeNext: answer[at + 1]! };
      at += 2;
      // As the script decides: a burst of 0 points is no burst.
      const burstCounted = rate.consumed > parts.spec.rate.points && (parts.spec.burst?.points ?? 0) > 0;
      const burst = burstCounted ? { consumed: answer[at]!, msBeforeNext: answer[at + 1]! } : undefined;
      if (burstCounted) at += 2;
      decision = decisionOf(parts.spec, rate, burst);
    } else {
      parts.metrics?.fallback(parts.spec.label);
      decision = await parts.consumeWithInsurance(key);
    }
    decisions.push(decision);
    if (!decision.allowed) {
      parts.metrics?.limited(parts.spec.label, parts.spec.rule ?? 'rate.limited');
      break;
    }
  }
  return decisions;
}

type LimitsToCount = ReadonlyArray<{ spec: LimitSpec; key: string }>;

/**
 * Most requests' counts one Redis write carries. At 64 publishes in flight one script call per request
 * cost the all-in-one process 12 % of its samples, mostly the socket write of each (docs/benchmarks.md,
 * "Limit counts in Redis").
 */
const COUNTS_TOGETHER = 32;

/** LIMITS_IN_ORDER_LUA's arguments for one request's limits: the number of keys, the keys, then ARGV. */
function scriptArguments(limits: LimitsToCount): [number, ...Array<string | number>] {
  const keys = limits.flatMap(({ spec, key }) => [`limit:${spec.name}:${key}`, `limit:${spec.name}:burst:${key}`]);
  const args = limits.flatMap(({ spec }) => [spec.rate.points, spec.rate.durationSeconds, spec.burst?.points ?? 0, spec.burst?.durationSeconds ?? 0]);
  return [keys.length, ...keys, ...args];
}

const countersOf = new WeakMap<Redis, (limits: LimitsToCount) => Promise<number[] | undefined>>();

/**
 * The script's answer for one request's limits, or undefined when Redis failed it (its insurance then
 * decides). Requests that arrive while one's count is in flight wait for it and then go together, as
 * one pipeline of script calls (one write, one read): Redis runs them one after the other in arrival
 * order, so each answer is what the request's own call would have got. A request arriving when none is
 * in flight goes at once.
 */
function countInRedis(redis: Redis, limits: LimitsToCount): Promise<number[] | undefined> {
  let counter = countersOf.get(redis);
  if (!counter) {
    redis.defineCommand('busLimitsInOrder', { lua: LIMITS_IN_ORDER_LUA });
    counter = coalesceCalls(
      () => 'counts',
      async (requests: LimitsToCount[]) => {
        // A lone request is one script call: a pipeline costs more to build than the call it carries.
        // Its failure is its caller's, which consumeInOrder answers from the insurance.
        if (requests.length === 1) return [await (redis as unknown as LimitsInOrderCommand).busLimitsInOrder(...scriptArguments(requests[0]!))];
        const pipeline = redis.pipeline() as unknown as LimitsInOrderCommand & { exec(): Promise<Array<[Error | null, unknown]> | null> };
        for (const request of requests) void pipeline.busLimitsInOrder(...scriptArguments(request));
        const replies = (await pipeline.exec()) ?? [];
        return requests.map((_, i) => {
          const reply = replies[i];
          return reply && reply[0] === null ? (reply[1] as number[]) : undefined;
        });
      },
      COUNTS_TOGETHER,
    );
    countersOf.set(redis, counter);
  }
  return counter(limits);
}

/** 429 rate.limited with Retry-After (docs/api.md#errors, #limits). */
export class RateLimitedError extends HttpError {
  override readonly name = 'RateLimitedError';
  constructor(retryAfterSeconds: number, what = 'Too many requests') {
    super(429, 'rate.limited', `${what}; retry after ${retryAfterSeconds} s`, 'policy', { 'Retry-After': String(retryAfterSeconds) });
  }
}

/** Consumes one point of each limiter in order (one Redis round trip) and throws RateLimitedError at the first refusal. */
export async function enforce(checks: LimitChecks, what?: string): Promise<void> {
  for (const decision of await consumeInOrder(checks)) {
    if (!decision.allowed) throw new RateLimitedError(decision.retryAfterSeconds, what);
  }
}
