import { ConfigError, databaseConfig, kafkaConfig, loadConfig, processConfig } from '@bus/config';
import { createDatabase, migrateLatest } from '@bus/db';
import { busTopics, createKafka, ensureTopics } from '@bus/kafka';
import { createLogger } from '@bus/observability';

/**
 * One-shot set-up of an environment, idempotent: Postgres migrations to the latest version and the
 * Kafka topics with the configured partitions, replication and retention. `npm run up` runs it before
 * the services; in Kubernetes the chart runs it as a pre-install/pre-upgrade hook Job.
 */
async function setup(): Promise<void> {
  const config = loadConfig({ LOG_LEVEL: processConfig.LOG_LEVEL, ...databaseConfig, ...kafkaConfig });
  const logger = createLogger({ service: 'setup', level: config.LOG_LEVEL });
  // Migrations may rewrite large tables: no statement bound here (the routes' bound is for requests).
  const db = createDatabase({
    url: config.DATABASE_URL,
    poolMax: 1,
    applicationName: 'setup',
    connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT,
    statementTimeoutMs: 0,
    logger,
  });
  try {
    const applied = await migrateLatest(db);
    logger.info({ applied }, 'migrations up to date');
  } finally {
    await db.destroy();
  }
  const admin = createKafka({ brokers: config.KAFKA_BROKERS, clientId: config.KAFKA_CLIENT_ID, logger }).admin();
  await admin.connect();
  try {
    await ensureTopics(
      admin,
      busTopics({
        messagesPartitions: config.KAFKA_MESSAGES_PARTITIONS,
        replicationFactor: config.KAFKA_REPLICATION_FACTOR,
        messagesRetentionMs: config.KAFKA_MESSAGES_RETENTION,
      }),
    );
    logger.info('kafka topics up to date');
  } finally {
    await admin.disconnect();
  }
}

setup().catch((err: unknown) => {
  process.stderr.write(`setup: ${err instanceof ConfigError ? err.message : err instanceof Error ? err.message : String(err)}\n`);
  process.exit(err instanceof ConfigError ? 2 : 1);
});
