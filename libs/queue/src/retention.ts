import { duration, int, optional, type ConfigOf, type VarReader } from '@bus/config';
import { deliveryStoryKey, IDEMPOTENCY_WINDOW, PORTAL_SIGN_IN_WINDOW, QUEUE_WINDOW, REFUSAL_WINDOW, type RetentionEntry, type RetentionWindow } from '@bus/db';
import { RETENTION_MESSAGE_KEPT } from './sql/retention-message-kept';
import { RETENTION_PROMOTE_HEAD } from './sql/retention-promote-head';

const DAY_MS = 86_400_000;

/**
 * Every table the bus writes per message or per operator action, in sweep order (deliveries before the
 * messages they hold on to). The registry lives here, not in libs/db with the sweep, because its queue
 * entries carry SQL on the queue's tables, which stays in this lib (sql/). Configuration tables (organisations … permissions, skill registrations)
 * are not here: they hold what operators configured, for as long as it is configured; signing keys
 * are removed by the token service once no token they signed can still be valid (docs/auth.md).
 */
export const RETENTION_TABLES = [
  {
    table: 'accepted_messages',
    what: 'idempotency records: message_id and content hash of every accepted message',
    why: 'a resent message_id answers 200 duplicate (or 409) for this long; docs/api.md#limits says at least 7 days. The default, the replay archive, means no archived message_id is accepted as new again, and a replay finds the acceptance of every archived message',
    window: IDEMPOTENCY_WINDOW,
    agesFrom: 't.accepted_at',
  },
  {
    table: 'story_state',
    what: 'sequence state of one correlation id (what telling/link step came last)',
    why: 'kept while any message of its correlation id is inside the idempotency window, so no message the bus still knows is judged against a forgotten story',
    window: IDEMPOTENCY_WINDOW,
    agesFrom: 't.updated_at',
    keptWhile: `EXISTS (SELECT 1 FROM accepted_messages a
                 WHERE a.workspace_id = t.workspace_id AND a.correlation_id = t.correlation_id AND a.accepted_at >= :cutoff)`,
    // The gateway's lock of one correlation id (services/gateway publish-store withStoryLocks).
    writerLock: `t.workspace_id || '/' || t.correlation_id`,
  },
  {
    table: 'consumer_fault_events',
    what: "faults injected into a consumer connection's deliveries (duplicate, delay, early lease expiry), listed in the message trace",
    why: 'as long as the queue keeps the delivery they happened to (docs/api.md#limits, 14 days): a consumer team can trace a fault for as long as the message is there; swept before the deliveries they refer to',
    window: QUEUE_WINDOW,
    agesFrom: 't.injected_at',
  },
  {
    table: 'dead_letters',
    what: 'messages dead-lettered after too many receives, open or redriven/discarded by the operator',
    why: 'the queue retention (docs/api.md#limits, 14 days): an open dead letter lives as long as its delivery could; a resolved one shows in the message trace as long',
    window: QUEUE_WINDOW,
    agesFrom: 't.dead_lettered_at',
  },
  {
    table: 'deliveries',
    what: "one consumer's copy of a message (queued, leased or acked)",
    why: 'docs/api.md#limits: a consumer queue keeps a message 14 days, received or not; an acked delivery stays as long, so a Kafka redelivery does not queue it again',
    window: QUEUE_WINDOW,
    agesFrom: 't.enqueued_at',
    // Ids are handed out as rows are enqueued, and a replay that queues a row again keeps its enqueued_at.
    oldestFirstBy: 'id',
    writerLock: deliveryStoryKey('t.workspace_id', 't.correlation_id'),
    onRemove: RETENTION_PROMOTE_HEAD,
  },
  {
    table: 'messages',
    what: "the producer's exact bytes, stored once per message for the consumer queues",
    why: 'kept while a delivery refers to it',
    window: QUEUE_WINDOW,
    agesFrom: 't.stored_at',
    keptWhile: RETENTION_MESSAGE_KEPT,
    // The enqueue's and a replay's lock of the story: they write a delivery for a message only while
    // holding it, so none is written for a message the sweep is removing (deliveries have no foreign key).
    writerLock: deliveryStoryKey('t.workspace_id', 't.correlation_id'),
  },
  {
    table: 'quarantined_records',
    what: 'Kafka records delivery held back (invariant A), with their bytes, for inspection and redrive',
    why: 'time for an operator to act on the BusDeliveryQuarantineGrowing alert: inspect, redrive (docs/admin.md)',
    window: { variable: 'QUARANTINE_RETENTION', defaultMs: 7 * DAY_MS, minimumMs: DAY_MS },
    agesFrom: 't.quarantined_at',
  },
  {
    table: 'replay_jobs',
    what: 'replay requests and their outcome (finished, failed or interrupted)',
    why: 'the replays an operator can look up (docs/admin.md); a running job marks itself alive every 10 s, so only finished or interrupted ones age',
    window: { variable: 'REPLAY_JOB_RETENTION', defaultMs: 30 * DAY_MS, minimumMs: DAY_MS },
    agesFrom: 'coalesce(t.finished_at, t.heartbeat_at)',
  },
  {
    table: 'refusals',
    what: "publishes the gateway refused, with their violations and ids (no body): a producer's recent refusals",
    why: 'time for a tester to look up why a message was refused (GET /v1/tenants/{t}/refusals, docs/testing-tools.md); the newest 100 per connection are kept within it',
    window: REFUSAL_WINDOW,
    agesFrom: 't.refused_at',
  },
  {
    table: 'run_validations',
    what: 'validates accepted during a test run (ids and type, no body), the first 500 of each run',
    why: "as long as the run's other records (docs/testing-tools.md#test-runs); swept before their run, whose removal would take them with it",
    window: REFUSAL_WINDOW,
    agesFrom: 't.validated_at',
  },
  {
    table: 'test_runs',
    what: "a tester's run: a label with a start and an end in a workspace, whose report is read from the refusals, acceptances and deliveries of that window",
    why: 'as long as the refusals its report lists (docs/testing-tools.md#test-runs); an open run ages from its planned end',
    window: REFUSAL_WINDOW,
    agesFrom: 't.ends_at',
  },
  {
    table: 'audit_log',
    what: 'changes made through the portal or the admin API: who, what, when, from where (never a secret)',
    why: "a year's review of who changed which credential or permission, with a month's margin; an organisation's admins and the operator read it (docs/portal.md)",
    window: { variable: 'AUDIT_RETENTION', defaultMs: 400 * DAY_MS, minimumMs: 90 * DAY_MS },
    agesFrom: 't.at',
  },
  {
    table: 'portal_sessions',
    what: "a signed-in person's session (hash of the cookie, grants, CSRF token, expiry)",
    why: 'no session outlives its absolute timeout (PORTAL_SESSION_MAX_AGE, at most 1 day): older rows are dead and only kept until the sweep',
    window: PORTAL_SIGN_IN_WINDOW,
    agesFrom: 't.created_at',
  },
  {
    table: 'portal_logins',
    what: 'a sign-in in progress (PKCE verifier and nonce of one OIDC state)',
    why: 'a sign-in is refused 10 minutes after it began: older rows are abandoned sign-ins',
    window: PORTAL_SIGN_IN_WINDOW,
    agesFrom: 't.created_at',
  },
] as const satisfies readonly RetentionEntry[];

export type RetentionVariable = (typeof RETENTION_TABLES)[number]['window']['variable'];

/** The distinct windows of the registry, in registry order. */
export const RETENTION_WINDOWS: readonly RetentionWindow[] = [...new Set<RetentionWindow>(RETENTION_TABLES.map((e) => e.window))];

function windowReaders(): { [V in RetentionVariable]: VarReader<number | undefined> } {
  const readers: Partial<Record<RetentionVariable, VarReader<number | undefined>>> = {};
  for (const w of RETENTION_WINDOWS) readers[w.variable as RetentionVariable] = optional(duration({ min: w.minimumMs }));
  return readers as { [V in RetentionVariable]: VarReader<number | undefined> };
}

/** The retention variables (read by the process that sweeps: delivery, or the all-in-one process). */
export const retentionConfig = {
  ...windowReaders(),
  /** How often the sweep runs. */
  RETENTION_SWEEP_INTERVAL: duration({ default: 60_000, min: 1_000, max: DAY_MS }),
  /** Rows one statement removes at most. */
  RETENTION_SWEEP_BATCH: int({ min: 1, max: 10_000, default: 1_000 }),
};

export interface RetentionSettings {
  /** Window of each variable, in ms. */
  windows: Readonly<Record<string, number>>;
  intervalMs: number;
  batchSize: number;
}

export function retentionSettings(config: ConfigOf<typeof retentionConfig> & { KAFKA_MESSAGES_RETENTION: number }): RetentionSettings {
  const windows: Record<string, number> = {};
  for (const w of RETENTION_WINDOWS) {
    const configured = config[w.variable as RetentionVariable];
    const fallback = w.defaultFrom === undefined ? w.defaultMs : Math.max(config[w.defaultFrom], w.minimumMs);
    windows[w.variable] = configured ?? fallback;
  }
  return { windows, intervalMs: config.RETENTION_SWEEP_INTERVAL, batchSize: config.RETENTION_SWEEP_BATCH };
}
