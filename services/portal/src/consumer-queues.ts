import type { DeadLetterResolution, QueueOperations, ResolvedDeadLetter } from '@bus/contracts';
import * as body from './admin-requests';
import type { ConnectionView, ReplayView } from './admin-store';
import { AdminConflictError, AdminNotFoundError } from './errors';
import type { ReplayRunner } from './replays';

/** A consumer connection's queue as the admin API and the portal API answer it (QueueStats in admin.json and portal.json). */
export interface QueueView {
  client_id: string;
  depth: number;
  in_flight: number;
  dead_letters: number;
  oldest_age_seconds: number | null;
}

/**
 * The queue of a consumer connection, from delivery's stats (409 admin.conflict for a producer, which
 * has none). The operator's route and the portal's both answer through here.
 */
export async function consumerQueue(queues: Pick<QueueOperations, 'stats'>, connection: ConnectionView, now: Date): Promise<QueueView> {
  if (connection.kind !== 'consumer') throw new AdminConflictError(`Connection ${connection.client_id} is a producer; it has no queue`);
  const stats = await queues.stats(connection.client_id);
  return {
    client_id: connection.client_id,
    depth: stats?.depth ?? 0,
    in_flight: stats?.inFlight ?? 0,
    dead_letters: stats?.deadLetters ?? 0,
    oldest_age_seconds: stats ? Math.max(0, (now.getTime() - stats.oldestEnqueuedAt.getTime()) / 1000) : null,
  };
}

/** 409 admin.conflict unless the connection is an active consumer: only those have registrations and replays. */
export function requireActiveConsumer(connection: ConnectionView): ConnectionView {
  if (connection.kind !== 'consumer')
    throw new AdminConflictError(`Connection ${connection.client_id} is a producer; only consumer connections have registrations and queues`);
  if (connection.status !== 'active') throw new AdminConflictError(`Connection ${connection.client_id} is ${connection.status}`);
  return connection;
}

/**
 * Starts a replay of an active consumer from `since` within the archive (400 admin.request_invalid
 * before its start or in the future): the job as it starts, followed at GET …/replays/{p}.
 */
export async function startReplay(
  deps: { replays: ReplayRunner; archiveMs: number },
  connection: ConnectionView,
  request: body.ReplayBody,
  now: Date,
): Promise<ReplayView> {
  const consumer = requireActiveConsumer(connection);
  const since = body.replaySince(request, now, deps.archiveMs);
  return deps.replays.start({ workspaceId: consumer.workspace_id, consumerId: consumer.client_id, since });
}

const MAX_BIGINT = 9_223_372_036_854_775_807n;

/**
 * Redrives or discards one open dead letter of a consumer connection (404 admin.not_found for none):
 * the operator's route and the portal's both resolve through here.
 */
export async function resolveOpenDeadLetter(
  queues: Pick<QueueOperations, 'resolveDeadLetter'>,
  connection: ConnectionView,
  id: string,
  resolution: DeadLetterResolution,
): Promise<ResolvedDeadLetter> {
  const what = `open dead letter of connection ${connection.client_id}`;
  // Ids are Postgres bigints: a longer number names no dead letter (and must not reach Postgres as one).
  if (!/^[1-9][0-9]{0,18}$/.test(id) || BigInt(id) > MAX_BIGINT) throw new AdminNotFoundError(what, id);
  const resolved = await queues.resolveDeadLetter(connection.client_id, id, resolution);
  if (!resolved) throw new AdminNotFoundError(what, id);
  return resolved;
}

/**
 * Purges a consumer connection's queue (409 admin.conflict for a producer, which has none): every
 * message waiting or in flight is removed, its dead letters stay. Whatever the connection's status,
 * as a dead letter's resolution: the queue is there until the retention sweep. The operator's route
 * and the portal's both purge through here.
 */
export async function purgeConsumerQueue(queues: Pick<QueueOperations, 'purge'>, connection: ConnectionView): Promise<{ purged: number }> {
  if (connection.kind !== 'consumer') throw new AdminConflictError(`Connection ${connection.client_id} is a producer; it has no queue to purge`);
  return { purged: await queues.purge(connection.client_id) };
}
