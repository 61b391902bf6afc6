import { createDatabase, databaseOptionsOf, databaseReadiness, writeActivity, type Knex } from '@bus/db';
import type { CompositionContext, ReadinessCheck } from '@bus/http';
import { createBoundedProducer, createKafka, createProducer, kafkaReadiness, type Kafka, type Producer } from '@bus/kafka';
import { createRedis, redisReadiness, type Redis } from '@bus/limits';
import { createActivityRecorder, type ActivityRecorder } from '@bus/observability';

type DatabaseSettings = Parameters<typeof databaseOptionsOf>[0];
type RedisSettings = { REDIS_URL: string; REDIS_KEY_PREFIX: string };
type KafkaSettings = { KAFKA_BROKERS: string[]; KAFKA_CLIENT_ID: string };
type AllSettings = DatabaseSettings & RedisSettings & KafkaSettings;

/** A client and the readiness check of the server behind it. */
export interface Client<T> {
  client: T;
  ready: ReadinessCheck;
}

/**
 * The I/O clients of one process (docs/architecture.md#layout: only a composition root creates them). Each is created
 * on its first call and the same one returned after; creating it registers its close, so clients
 * close in reverse order of first use, after the servers have drained.
 */
export interface AllProcessClients {
  /** Postgres through knex (DATABASE_*), named `name` in pg_stat_activity. */
  postgres(this: void): Client<Knex>;
  /**
   * The process's activity recorder (the portal's charts), writing to postgres(): one per process,
   * however many of its services count, so one timer and one write every few seconds. It runs from
   * its creation (a flush with nothing counted writes nothing); its close comes after every service
   * stopped, so the counts of the last requests and batches are written, and before Postgres closes.
   */
  activity(this: void): ActivityRecorder;
  /** Redis (REDIS_URL, REDIS_KEY_PREFIX); its readiness is optional. */
  redis(this: void): Client<Redis>;
  /** The kafkajs client (KAFKA_BROKERS); `ready` asks the brokers through an admin client. */
  kafka(this: void): Client<Kafka>;
  /** A connected producer on the Kafka client (the portal's control events). */
  producer(this: void): Promise<Producer>;
  /**
   * A connected producer of its own client that gives up within `deadlineMs` (the publish's commit
   * bound), while the consumers and the admin keep kafkajs's patient defaults.
   */
  boundedProducer(this: void, deadlineMs: number): Promise<Producer>;
}

/** Only the clients whose variables the root's configuration declares: another does not compile. */
export type ProcessClients<C> = (C extends DatabaseSettings ? Pick<AllProcessClients, 'postgres' | 'activity'> : unknown) &
  (C extends RedisSettings ? Pick<AllProcessClients, 'redis'> : unknown) &
  (C extends KafkaSettings ? Pick<AllProcessClients, 'kafka' | 'producer' | 'boundedProducer'> : unknown);

export function processClients<C>(ctx: CompositionContext<C>, name: string): ProcessClients<C> {
  // ProcessClients<C> offers a client only when C declares its variables, so what is read is there.
  const config = ctx.config as unknown as AllSettings;
  const once = <T>(create: () => T): (() => T) => {
    let made: { value: T } | undefined;
    return () => (made ??= { value: create() }).value;
  };
  const kafkaOptions = () => ({ brokers: config.KAFKA_BROKERS, clientId: config.KAFKA_CLIENT_ID, logger: ctx.logger });
  const connected = async (producer: Producer): Promise<Producer> => {
    await producer.connect();
    ctx.onClose(() => producer.disconnect());
    return producer;
  };

  const postgres = once(() => {
    const db = createDatabase({ ...databaseOptionsOf(config, name), logger: ctx.logger });
    ctx.onClose(() => db.destroy());
    return { client: db, ready: databaseReadiness(db) };
  });
  const activity = once(() => {
    const { client: db } = postgres();
    const recorder = createActivityRecorder({ write: (rows) => writeActivity(db, rows), logger: ctx.logger, metrics: ctx.metrics });
    recorder.start();
    ctx.onClose(() => recorder.stop());
    return recorder;
  });
  const redis = once(() => {
    const client = createRedis(config.REDIS_URL, ctx.logger, { keyPrefix: config.REDIS_KEY_PREFIX });
    ctx.onClose(() => client.disconnect());
    return { client, ready: redisReadiness(client) };
  });
  const kafka = once(() => {
    const client = createKafka(kafkaOptions());
    const admin = client.admin();
    ctx.onClose(() => admin.disconnect());
    return { client, ready: kafkaReadiness(admin) };
  });
  const producer = once(() => connected(createProducer(kafka().client)));
  const all: AllProcessClients = {
    postgres,
    activity,
    redis,
    kafka,
    producer,
    boundedProducer: (deadlineMs) => connected(createBoundedProducer(kafkaOptions(), deadlineMs)),
  };
  return all as ProcessClients<C>;
}
