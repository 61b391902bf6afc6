import type { Logger } from 'pino';
import { DependencyUnavailableError, HttpError, ViolationsError, type Violation } from '@bus/http';
// A failed registry read is 503 registry.unavailable with the store's error as its cause (logged once).
import { unavailableOnFailure as registryRead } from '@bus/identity';
import { RULES, applySequence, checkPolicy, contentHash, familyOf, parseJsonBody, parseStoryState, type SomMessage, type SomValidator } from '@bus/som';
import { deadlineIn } from './deadline';
import type { AcceptedMessage, PriorAcceptance, PublishStore } from './publish-store';

/** The producer a publish is for, as authentication established it. */
export interface Publisher {
  clientId: string;
  workspaceId: string;
  appId: string;
}

/** Sends the accepted bytes to Kafka with acks=all; resolves once the brokers have them. */
export type CommitToKafka = (message: {
  key: { workspaceId: string; correlationId: string };
  value: Buffer;
  headers: { messageId: string; messageType: string; family: string | null; producerConnectionId: string; contentHash: string; acceptedAt: Date };
}) => Promise<{ partition: number; offset: string }>;

export interface PublishDeps {
  store: PublishStore;
  validator: SomValidator;
  commitToKafka: CommitToKafka;
  /** The commit's budget (PUBLISH_COMMIT_TIMEOUT): past it the transaction rolls back and the answer is 503. */
  commitTimeoutMs: number;
  /** Reports a Kafka send that landed after its publish was given up. */
  logger: Logger;
  now?: () => Date;
}

export type PublishMode = 'publish' | 'validate';

export interface PublishAnswer {
  status: 200 | 202;
  body: Record<string, unknown>;
}

/** 409 idempotency.message_id_reused. */
export class MessageIdReusedError extends HttpError {
  override readonly name = 'MessageIdReusedError';
  constructor(messageId: string) {
    super(409, 'idempotency.message_id_reused', `message_id ${messageId} was accepted before with different content`, 'policy');
  }
}

/**
 * 503 publish.unavailable: Postgres or Kafka failed during the commit, or it ran out of time; nothing
 * was accepted. `cause` is the failure itself, which the error middleware logs.
 */
export class PublishUnavailableError extends DependencyUnavailableError {
  override readonly name = 'PublishUnavailableError';
  constructor(cause: unknown) {
    super('publish.unavailable', RULES['publish.unavailable'].description, cause);
  }
}

/**
 * One message through the gateway after authentication and limits (DESIGN §4 steps 3–5): parse,
 * validate (schema, conformance), idempotency, policy, sequence; then, for a publish, the
 * transaction that holds the correlation id's lock across the Kafka send and commits before 202.
 * A validate runs the same checks and writes nothing.
 */
export async function publishMessage(deps: PublishDeps, publisher: Publisher, bytes: Buffer, mode: PublishMode): Promise<PublishAnswer> {
  const parsed = parseJsonBody(bytes);
  if (!parsed.ok) throw refused(parsed.violations);
  // Schema and conformance first: they depend on the content alone, so a resend of an accepted
  // message passes them again, and the idempotency lookup below only ever sees a well-formed
  // message_id (a NUL in it would otherwise reach Postgres).
  const validation = deps.validator.validate(parsed.value);
  if (!validation.ok) throw refused(validation.violations);
  const message = validation.message;
  const hash = contentHash(parsed.value);
  const prior = await registryRead(() => deps.store.accepted(publisher.workspaceId, message.message_id));
  const duplicate = answerPrior(prior, message.message_id, hash, mode);
  if (duplicate) return duplicate;

  const permissions = await registryRead(() => deps.store.permissions(publisher.appId));
  const policy = checkPolicy(message, permissions);
  if (policy.length > 0) throw refused(policy);

  const family = familyOf(message.message_type);
  const accepted = acceptedBody(message, family, validation.tolerated);
  if (mode === 'validate') {
    nextStoryState(await registryRead(() => deps.store.storyState(publisher.workspaceId, message.correlation_id)), message);
    return { status: 202, body: { ...accepted, dry_run: true } };
  }
  // The sequence is checked inside the commit, against the state its lock holds still.
  return (await commit(deps, publisher, bytes, message, hash, family)) ?? { status: 202, body: accepted };
}

/** Returns a duplicate answer, null for a first publish, or throws for a reused message_id. */
async function commit(
  deps: PublishDeps,
  publisher: Publisher,
  bytes: Buffer,
  message: SomMessage,
  hash: string,
  family: string | null,
): Promise<PublishAnswer | null> {
  // One budget for the whole commit: the answer never waits past it (not even for a rollback queued
  // behind a slow statement), and the transaction never sends to Kafka or commits after it.
  const deadline = deadlineIn(deps.commitTimeoutMs);
  // What the commit waits for, named in the timeout's cause (the log says why a publish was given up).
  let waitingFor = 'the story lock';
  const transaction = deps.store.withStoryLock(publisher.workspaceId, message.correlation_id, async (tx) => {
    waitingFor = 'Postgres (acceptance and story state)';
    // Re-checked under the lock: a racing publish of the same message_id or of the same
    // correlation id may have committed while this one waited.
    const duplicate = answerPrior(await tx.accepted(message.message_id), message.message_id, hash, 'publish');
    if (duplicate) return duplicate;
    const next = nextStoryState(await tx.storyState(), message);
    const acceptedAt = (deps.now ?? (() => new Date()))();
    // A publish already answered 503 (the lock came too late) sends nothing.
    deadline.check(waitingFor);
    waitingFor = 'the Kafka acknowledgement';
    const sent = deps.commitToKafka({
      key: { workspaceId: publisher.workspaceId, correlationId: message.correlation_id },
      value: bytes,
      headers: { messageId: message.message_id, messageType: message.message_type, family, producerConnectionId: publisher.clientId, contentHash: hash, acceptedAt },
    });
    const { partition, offset } = await deadline.race(sent, waitingFor, (late) => {
      // The record landed without its acceptance: delivery waits DELIVERY_ACCEPTANCE_WAIT for it, then
      // quarantines it (acceptance.missing), so it is never delivered (invariant A). Said here so the
      // quarantine has a visible reason; the producer's retry with the same message_id is accepted once.
      if (late.status === 'fulfilled') {
        deps.logger.warn(
          { workspace_id: publisher.workspaceId, message_id: message.message_id, partition: late.value.partition, offset: late.value.offset },
          'Kafka acknowledged a record after its publish had timed out; delivery will quarantine it (acceptance.missing)',
        );
      }
    });
    const record: AcceptedMessage = {
      workspaceId: publisher.workspaceId,
      messageId: message.message_id,
      contentHash: hash,
      messageType: message.message_type,
      correlationId: message.correlation_id,
      producerConnectionId: publisher.clientId,
      acceptedAt,
      kafkaPartition: partition,
      kafkaOffset: offset,
    };
    waitingFor = 'Postgres (recording the acceptance)';
    await tx.record(record, next.changed ? next.state : null);
    // Never commit what was answered 503.
    deadline.check(waitingFor);
    waitingFor = 'the Postgres commit';
    return null;
  });
  try {
    return await deadline.race(transaction, () => waitingFor);
  } catch (err) {
    if (err instanceof HttpError) throw err;
    // Kafka or Postgres failed or ran out of time: the transaction rolled back, so nothing is accepted
    // and a retry with the same message_id is safe. A record Kafka may hold without its commit is never
    // delivered (delivery enqueues only what accepted_messages confirms: invariant A).
    throw new PublishUnavailableError(err);
  }
}

function nextStoryState(stored: unknown, message: SomMessage): { state: ReturnType<typeof parseStoryState>; changed: boolean } {
  const outcome = applySequence(stored === null ? null : parseStoryState(stored), message);
  if (!outcome.ok) throw refused(outcome.violations);
  return { state: outcome.next, changed: outcome.changed };
}

function answerPrior(prior: PriorAcceptance, messageId: string, hash: string, mode: PublishMode): PublishAnswer | null {
  if (!prior) return null;
  if (prior.contentHash !== hash) throw new MessageIdReusedError(messageId);
  return { status: 200, body: { accepted: true, duplicate: true, message_id: messageId, ...(mode === 'validate' ? { dry_run: true } : {}) } };
}

function acceptedBody(message: SomMessage, family: string | null, tolerated: readonly Violation[]): Record<string, unknown> {
  return {
    accepted: true,
    message_id: message.message_id,
    message_type: message.message_type,
    family,
    ...(tolerated.length > 0 ? { tolerated: [...tolerated] } : {}),
  };
}

/** The status of a refusal is the catalogue's status of its rules (one step's rules share one). */
function refused(violations: readonly Violation[]): ViolationsError {
  const status = Math.max(...violations.map((v) => (Object.hasOwn(RULES, v.rule) ? RULES[v.rule as keyof typeof RULES].status : 400)));
  return new ViolationsError(status, violations);
}
