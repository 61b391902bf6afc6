export { createRedis, redisReadiness } from './redis';
export type { Redis } from './redis';
