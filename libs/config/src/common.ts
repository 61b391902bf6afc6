import { duration, hostPorts, int, oneOf, optional, port, str, url } from './spec';

/** Variables every service process reads. */
export const processConfig = {
  HOST: str({ default: '0.0.0.0' }),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info' }),
  /** Tracing is off unless an OTLP/HTTP endpoint is given (e.g. http://otel-collector:4318). */
  OTEL_EXPORTER_OTLP_ENDPOINT: optional(url({ protocols: ['http:', 'https:'] })),
  /** How long SIGTERM waits for in-flight requests before closing the remaining connections. */
  SHUTDOWN_DRAIN_TIMEOUT: duration({ default: 10_000 }),
} as const;

export function servicePort(defaultPort: number) {
  return { PORT: port({ default: defaultPort }) } as const;
}

export const databaseConfig = {
  DATABASE_URL: url({ protocols: ['postgres:', 'postgresql:'] }),
  DATABASE_POOL_MAX: int({ min: 1, max: 500, default: 10 }),
  /** Opening a connection or waiting for a free one: past it the request gets its 503. */
  DATABASE_CONNECT_TIMEOUT: duration({ default: 5_000, min: 100, max: 60_000 }),
  /** One statement (Postgres cancels it; lock waits included). */
  DATABASE_STATEMENT_TIMEOUT: duration({ default: 10_000, min: 100, max: 600_000 }),
} as const;

export const redisConfig = {
  REDIS_URL: url({ protocols: ['redis:', 'rediss:'] }),
  /** Starts every key of this deployment, so several (Sandbox, Preview, test runs) can share a Redis. */
  REDIS_KEY_PREFIX: str({ default: 'bus', pattern: /^[A-Za-z0-9_.-]{1,64}$/ }),
} as const;

/** The bus host's own limits (docs/api.md#limits values by default). */
export const busLimitsConfig = {
  BUS_LIMIT_PER_ADDRESS_PER_MINUTE: int({ min: 1, max: 1_000_000, default: 600 }),
  BUS_LIMIT_API_PER_SECOND: int({ min: 1, max: 100_000, default: 200 }),
  BUS_LIMIT_API_BURST: int({ min: 1, max: 200_000, default: 400 }),
  /**
   * Multiplies every connection's per-second rate and burst (docs/api.md#limits tiers; the daily quota stays).
   * 1 in every deployment: more is for a load test on loopback that measures the bus past one
   * connection's ceiling (bench:e2e's receive + ack), and the process logs a warning at start-up.
   */
  BUS_LIMIT_CONNECTION_FACTOR: int({ min: 1, max: 100, default: 1 }),
} as const;

export const kafkaConfig = {
  KAFKA_BROKERS: hostPorts(),
  KAFKA_CLIENT_ID: str({ default: 'message-bus' }),
  KAFKA_MESSAGES_PARTITIONS: int({ min: 1, max: 10_000, default: 12 }),
  KAFKA_REPLICATION_FACTOR: int({ min: 1, max: 10, default: 3 }),
  /** Retention of bus.messages.v1 = the environment's replay archive: 30 days Sandbox, 7 days Preview. */
  KAFKA_MESSAGES_RETENTION: duration({ default: 30 * 86_400_000 }),
} as const;
