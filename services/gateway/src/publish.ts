import type { Violation } from '@bus/http';
// A failed registry read is 503 registry.unavailable with the store's error as its cause (logged once).
import { unavailableOnFailure as registryRead } from '@bus/identity';
import { checkPolicy, contentHash, familyOf, parseJsonBody, type ProducerPermissions, type SomMessage, type SomValidator } from '@bus/som';
import { decideBatch, workspaceKey, type BatchMember, type MemberDecision } from './batch-decisions';
import type { GroupCommitter } from './group-commit';
import { markSendSpan } from './kafka-commit';
import type { PublishStore } from './publish-store';

/** The producer a publish is for, as authentication established it. */
export interface Publisher {
  clientId: string;
  workspaceId: string;
  appId: string;
}

export interface PublishDeps {
  store: PublishStore;
  validator: SomValidator;
  /** What an app may publish (cached in the process, dropped by the control topic's app changes). */
  permissions: (appId: string) => Promise<ProducerPermissions>;
  committer: GroupCommitter;
  /** The publish request's trace context, for its Kafka record. */
  traceparent: () => string | null;
}

export type PublishMode = 'publish' | 'validate';

/** A message the bus took: accepted now, or a resend of one it accepted before (`duplicate`). */
export interface PublishAnswer {
  outcome: 'accepted' | 'duplicate';
  body: Record<string, unknown>;
}

/** The message broke rules of the catalogue (parse, schema, conformance, policy or sequence). */
export class MessageRefusedError extends Error {
  override readonly name = 'MessageRefusedError';
  constructor(
    readonly violations: readonly Violation[],
    /** Violations found beyond `violations`, only counted. */
    readonly omitted = 0,
  ) {
    super(violations[0]?.message ?? 'refused');
  }
}

/** The message_id was accepted before with other content. */
export class MessageIdReusedError extends Error {
  override readonly name = 'MessageIdReusedError';
  constructor(readonly messageId: string) {
    super(`message_id ${messageId} was accepted before with different content`);
  }
}

/**
 * Postgres or Kafka failed during the commit, or it ran out of time; nothing was accepted, so a retry
 * is safe. `cause` is the failure itself.
 */
export class CommitFailedError extends Error {
  override readonly name = 'CommitFailedError';
  constructor(cause: unknown) {
    super('the commit to Kafka and Postgres failed', { cause });
  }
}

/**
 * One message through the gateway after authentication and limits (docs/architecture.md#data-flow steps 3–5): parse,
 * validate (schema, conformance), idempotency, policy, sequence; a publish then joins a group commit
 * (group-commit.ts), which holds the correlation id's lock across the Kafka send and commits before
 * 202. A validate runs the same checks and writes nothing. `timings` gets the validate, policy and
 * commit steps (Server-Timing).
 */
export async function publishMessage(
  deps: PublishDeps,
  publisher: Publisher,
  bytes: Buffer,
  mode: PublishMode,
  timings?: { mark(step: string): void },
): Promise<PublishAnswer> {
  // Schema and conformance first: they depend on the content alone, so a resend of an accepted
  // message passes them again, and the idempotency lookup only ever sees a well-formed message_id
  // (a NUL in it would otherwise reach Postgres).
  const { message, hash, tolerated } = bytes.length > LARGE_BODY_BYTES ? await largeBodies.run(() => checkContent(deps, bytes)) : checkContent(deps, bytes);
  timings?.mark('validate');
  const family = familyOf(message.message_type);
  const accepted = acceptedBody(message, family, tolerated);

  // Idempotency comes first in the decision (a resend is a duplicate whatever the policy says now);
  // the policy's verdict is carried into it and applied after, as decideBatch does for a publish.
  const member = {
    workspaceId: publisher.workspaceId,
    message,
    hash,
    policy: checkPolicy(message, await registryRead(() => deps.permissions(publisher.appId))),
  };
  timings?.mark('policy');
  const decision = mode === 'validate' ? await dryRun(deps.store, member, timings) : await commit(deps, member, publisher, bytes, family, timings);
  switch (decision.kind) {
    case 'accepted':
      return { outcome: 'accepted', body: mode === 'validate' ? { ...accepted, dry_run: true } : accepted };
    case 'duplicate':
      return {
        outcome: 'duplicate',
        body: { accepted: true, duplicate: true, message_id: message.message_id, ...(mode === 'validate' ? { dry_run: true } : {}) },
      };
    case 'reused':
      throw new MessageIdReusedError(message.message_id);
    case 'refused':
      throw new MessageRefusedError(decision.violations);
  }
}

/**
 * Bodies over this size are parsed and validated one at a time per process (`largeBodies`). Their
 * checks are synchronous and cost up to tens of milliseconds (a 230 KB body of 25,000 unknown members:
 * ~30 ms); forty in flight at once would hold every other request's next step behind all of them.
 * Queued one at a time, a small message waits for at most one large body's checks at each step.
 */
const LARGE_BODY_BYTES = 64 * 1024;
const largeBodies = serialLane();

/** Parse, schema and conformance: what depends on the bytes alone. */
function checkContent(deps: PublishDeps, bytes: Buffer): { message: SomMessage; hash: string; tolerated: readonly Violation[] } {
  const parsed = parseJsonBody(bytes);
  if (!parsed.ok) throw new MessageRefusedError(parsed.violations);
  const validation = deps.validator.validate(parsed.value);
  if (!validation.ok) throw new MessageRefusedError(validation.violations, validation.omitted);
  return { message: validation.message, hash: contentHash(parsed.value), tolerated: validation.tolerated };
}

/** Runs work one at a time, in the order it was asked for, each in a turn of the event loop of its own. */
function serialLane(): { run<T>(work: () => T): Promise<T> } {
  let tail: Promise<unknown> = Promise.resolve();
  return {
    run<T>(work: () => T): Promise<T> {
      const next = tail.then(
        () =>
          new Promise<T>((resolve, reject) =>
            setImmediate(() => {
              try {
                resolve(work());
              } catch (err) {
                reject(err);
              }
            }),
          ),
      );
      tail = next.catch(() => undefined);
      return next;
    },
  };
}

/** A validate: the publish's decision against what Postgres holds now (one snapshot), without locks, writing nothing. */
async function dryRun(store: PublishStore, member: BatchMember, timings?: { mark(step: string): void }): Promise<MemberDecision> {
  const { workspaceId, message } = member;
  const { prior, state } = await registryRead(() => store.dryRunView(workspaceId, message.message_id, message.correlation_id)).finally(() =>
    timings?.mark('dry_run'),
  );
  const priorHashes = new Map(prior ? [[workspaceKey(workspaceId, message.message_id), prior.contentHash]] : []);
  const storedStates = new Map(state === null ? [] : [[workspaceKey(workspaceId, message.correlation_id), state]]);
  return decideBatch([member], priorHashes, storedStates).decisions[0] as MemberDecision;
}

/** A publish: joins a group commit; its failure (Kafka, Postgres, the deadline) is CommitFailedError. */
async function commit(
  deps: PublishDeps,
  member: BatchMember,
  publisher: Publisher,
  bytes: Buffer,
  family: string | null,
  timings?: { mark(step: string): void },
): Promise<MemberDecision> {
  markSendSpan(member.message.message_id);
  try {
    return await deps.committer.commit({ ...member, producerConnectionId: publisher.clientId, bytes, family, traceparent: deps.traceparent() });
  } catch (err) {
    // Kafka or Postgres failed or ran out of time: the transaction rolled back, so nothing is accepted
    // and a retry with the same message_id is safe. A record Kafka may hold without its commit is never
    // delivered (delivery enqueues only what accepted_messages confirms: invariant A).
    throw new CommitFailedError(err);
  } finally {
    timings?.mark('commit');
  }
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
