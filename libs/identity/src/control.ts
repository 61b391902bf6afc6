import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import {
  CONTROL_TOPIC,
  createConsumer,
  runBatches,
  trackGroupMembership,
  sendAcked,
  type Consumer,
  type ConsumerRun,
  type Kafka,
  type Producer,
} from '@bus/kafka';
import type { Logger } from 'pino';

/** `tools`: the consumer connection's testing settings changed (read with the connection). */
export type ConnectionChange = 'created' | 'rotated' | 'revoked' | 'removed' | 'tools';

/**
 * A change on the control topic bus.control.v1 (docs/architecture.md#data-flow): every process that caches identity drops
 * what the event names. Keyed by what changed (`connection/<id>`), so compaction keeps the last one.
 */
export type ControlEvent =
  | { type: 'connection.changed'; connection_id: string; change: ConnectionChange; at: string }
  | { type: 'app.changed'; app_id: string; at: string }
  // Quotas are read per request today, so no cache drops anything on it yet; it is announced so a
  // cache added later cannot miss a tier change, and the compacted topic records the last one.
  | { type: 'quota.changed'; scope: QuotaScope; id: string; at: string }
  // An identity provider registered, changed or removed (its bindings go with it): caches drop the
  // issuer's provider and every binding.
  | { type: 'provider.changed'; provider_id: string; issuer: string; at: string }
  | { type: 'binding.changed'; provider_id: string; client: string; at: string };

/** Who carries a quota: a workspace (its house's connections) or an organisation (its vendor connections). */
export type QuotaScope = 'organisation' | 'workspace';

export class ControlEventError extends Error {
  override readonly name = 'ControlEventError';
}

export function controlKey(event: ControlEvent): string {
  switch (event.type) {
    case 'connection.changed':
      return `connection/${event.connection_id}`;
    case 'app.changed':
      return `app/${event.app_id}`;
    case 'quota.changed':
      return `quota/${event.scope}/${event.id}`;
    case 'provider.changed':
      return `provider/${event.provider_id}`;
    case 'binding.changed':
      return `binding/${event.provider_id}/${event.client}`;
  }
}

export function parseControlEvent(value: Buffer | null): ControlEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value?.toString('utf8') ?? '');
  } catch {
    throw new ControlEventError('control record is not JSON');
  }
  const e = parsed as Partial<Record<string, unknown>>;
  if (e?.type === 'connection.changed' && typeof e.connection_id === 'string') return parsed as ControlEvent;
  if (e?.type === 'app.changed' && typeof e.app_id === 'string') return parsed as ControlEvent;
  if (e?.type === 'quota.changed' && (e.scope === 'organisation' || e.scope === 'workspace') && typeof e.id === 'string') return parsed as ControlEvent;
  if (e?.type === 'provider.changed' && typeof e.provider_id === 'string' && typeof e.issuer === 'string') return parsed as ControlEvent;
  if (e?.type === 'binding.changed' && typeof e.provider_id === 'string' && typeof e.client === 'string') return parsed as ControlEvent;
  throw new ControlEventError('unknown control event');
}

export interface ControlPublisher {
  publish(event: ControlEvent): Promise<void>;
}

/** Publishes with acks=all; the producer is connected by its owner. */
export function createControlPublisher(producer: Producer): ControlPublisher {
  return {
    publish: async (event) => {
      await sendAcked(producer, { topic: CONTROL_TOPIC, key: controlKey(event), value: Buffer.from(JSON.stringify(event)), headers: {} });
    },
  };
}

export interface ControlListener {
  /**
   * Starts reading and resolves once the consumer joined its group (it then reads from the end of the
   * topic), or after `joinTimeoutMs` at the latest: a process whose Kafka is down still starts, and
   * keeps trying in the background; meanwhile the caches' TTL bounds staleness.
   */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** True while the consumer is in its group and reading: changes then reach the caches at once. */
  live(): boolean;
  /** The listener's own consumer group, deleted by `stop`. */
  readonly groupId: string;
}

/** Deletes a group no member is in any more; one that never came to exist is not an error. */
async function deleteGroup(kafka: Kafka, groupId: string): Promise<void> {
  const admin = kafka.admin();
  let timer: NodeJS.Timeout | undefined;
  const work = (async () => {
    await admin.connect();
    try {
      await admin.deleteGroups([groupId]);
    } catch (err) {
      const groups = (err as { groups?: Array<{ error?: { type?: string } }> }).groups;
      if (!groups?.every((g) => g.error?.type === 'GROUP_ID_NOT_FOUND')) throw err;
    }
  })();
  try {
    await Promise.race([
      work,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('Kafka did not delete the group in time')), GROUP_DELETE_TIMEOUT_MS))),
    ]);
  } finally {
    clearTimeout(timer);
    await admin.disconnect().catch(() => undefined);
  }
}

/** A stop waits at most this long for Kafka to delete the listener's group. */
const GROUP_DELETE_TIMEOUT_MS = 5_000;

/**
 * Every process instance reads every control event: its consumer group is its own (name, host,
 * pid, random), and it starts at the end of the topic, since its cache starts empty anyway. kafkajs
 * reads only through a group, and the group's commits let a consumer restarted in the same process
 * resume where it was; so a stop deletes the group, which no process will read again. A crashed
 * process's group stays until Kafka expires its offsets; its name (`identity.<component>.…`) tells it
 * apart, and the lag metric reads delivery's group only.
 */
export function createControlListener(opts: {
  kafka: Kafka;
  name: string;
  logger: Logger;
  onEvent(event: ControlEvent): void;
  joinTimeoutMs?: number;
  retryMs?: number;
}): ControlListener {
  let consumer: Consumer | undefined;
  let reading: ConsumerRun | undefined;
  let membership: { joined(): boolean } | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const groupId = `${opts.name}.${hostname()}.${process.pid}.${randomBytes(4).toString('hex')}`;

  const run = async (onJoin: () => void): Promise<void> => {
    const c = createConsumer(opts.kafka, { groupId, sessionTimeoutMs: 10_000 });
    consumer = c;
    membership = trackGroupMembership(c, onJoin);
    try {
      await c.connect();
      await c.subscribe({ topic: CONTROL_TOPIC, fromBeginning: false });
      reading = await runBatches(
        c,
        async (record) => {
          try {
            opts.onEvent(parseControlEvent(record.value));
          } catch (err) {
            opts.logger.warn({ err, offset: record.offset }, 'control event skipped');
          }
        },
        { logger: opts.logger },
      );
    } catch (err) {
      membership = undefined;
      opts.logger.warn({ err }, 'control topic unreachable; caches rely on their TTL until it is back');
      await c.disconnect().catch(() => undefined);
      if (!stopped) retry = setTimeout(() => void run(onJoin), opts.retryMs ?? 5_000);
    }
  };

  return {
    groupId,
    start: async () => {
      let joined: () => void = () => undefined;
      const join = new Promise<void>((resolve) => (joined = resolve));
      void run(() => joined());
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, opts.joinTimeoutMs ?? 10_000)));
      await Promise.race([join, timeout]);
      clearTimeout(timer);
    },
    stop: async () => {
      stopped = true;
      clearTimeout(retry);
      await (reading ? reading.stop() : consumer?.disconnect());
      await deleteGroup(opts.kafka, groupId).catch((err: unknown) =>
        opts.logger.warn({ err, groupId }, 'control listener group not deleted; Kafka expires it'),
      );
    },
    live: () => !stopped && membership?.joined() === true,
  };
}
