import { duration } from '@bus/config';
import { sigv4Config } from '@bus/identity';

/** The gateway's own variables (on top of Postgres, Redis, Kafka and the identity settings). */
export const gatewayConfig = {
  /** The AWS-signed routes: region, clock skew, their shared limit, and the key that opens principals' secrets. */
  ...sigv4Config,
  /**
   * How long a publish's commit may take (story lock, Kafka send with acks=all, Postgres commit):
   * past it the transaction rolls back and the answer is 503 publish.unavailable. Keep it well below
   * delivery's DELIVERY_ACCEPTANCE_WAIT (docs/operations.md, "Dependency outages").
   */
  PUBLISH_COMMIT_TIMEOUT: duration({ default: 5_000, min: 100, max: 20_000 }),
} as const;
