import { HttpError, ViolationsError, type Violation } from '@bus/http';
import { RegistryUnavailableError } from '@bus/identity';
import { RULES, applySequence, checkPolicy, contentHash, familyOf, parseJsonBody, parseStoryState, type SomMessage, type SomValidator } from '@bus/som';
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

/** 503 publish.unavailable: Postgres or Kafka failed during the commit; nothing was accepted. */
export class PublishUnavailableError extends HttpError {
  override readonly name = 'PublishUnavailableError';
  constructor() {
    super(503, 'publish.unavailable', RULES['publish.unavailable'].description, 'policy', { 'Retry-After': '1' });
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
  try {
    return await deps.store.withStoryLock(publisher.workspaceId, message.correlation_id, async (tx) => {
      // Re-checked under the lock: a racing publish of the same message_id or of the same
      // correlation id may have committed while this one waited.
      const duplicate = answerPrior(await tx.accepted(message.message_id), message.message_id, hash, 'publish');
      if (duplicate) return duplicate;
      const next = nextStoryState(await tx.storyState(), message);
      const acceptedAt = (deps.now ?? (() => new Date()))();
      const { partition, offset } = await deps.commitToKafka({
        key: { workspaceId: publisher.workspaceId, correlationId: message.correlation_id },
        value: bytes,
        headers: { messageId: message.message_id, messageType: message.message_type, family, producerConnectionId: publisher.clientId, contentHash: hash, acceptedAt },
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
      await tx.record(record, next.changed ? next.state : null);
      return null;
    });
  } catch (err) {
    if (err instanceof HttpError) throw err;
    // Kafka or Postgres failed: the transaction rolled back, so nothing is accepted and a retry with
    // the same message_id is safe. A record Kafka may hold without its commit is never delivered
    // (delivery enqueues only what accepted_messages confirms: invariant A).
    throw new PublishUnavailableError();
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

async function registryRead<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch {
    throw new RegistryUnavailableError();
  }
}
