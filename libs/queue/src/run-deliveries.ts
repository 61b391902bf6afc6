import type { RunReport, Span } from '@bus/client';
import { rawQuery, type Knex } from '@bus/db';
import { RUN_DELIVERIES } from './sql/run-deliveries';

type RunConsumer = RunReport['consumers'][number];

const span = (median: number | null, max: number | null): Span | null =>
  median === null || max === null ? null : { median_ms: Math.round(median), max_ms: Math.round(max) };

/** Per consumer (every one of `consumers`, in that order, with zeros when it holds no copy): what it received and acked of `accepted`. */
export async function readRunDeliveries(
  db: Knex,
  workspaceId: string,
  consumers: readonly string[],
  accepted: ReadonlyArray<{ messageId: string; acceptedAt: Date }>,
): Promise<RunConsumer[]> {
  const { rows } = await rawQuery<{
    consumer_id: string;
    enqueued: number;
    received: number;
    acked: number;
    receive_median_ms: number | null;
    receive_max_ms: number | null;
    ack_median_ms: number | null;
    ack_max_ms: number | null;
  }>(db, RUN_DELIVERIES, [accepted.map((a) => a.messageId), accepted.map((a) => a.acceptedAt.toISOString()), [...consumers], workspaceId]);
  const found = new Map(rows.map((r) => [r.consumer_id, r]));
  return consumers.map((consumerId) => {
    const r = found.get(consumerId);
    return {
      consumer_id: consumerId,
      enqueued: r?.enqueued ?? 0,
      received: r?.received ?? 0,
      acked: r?.acked ?? 0,
      publish_to_receive: span(r?.receive_median_ms ?? null, r?.receive_max_ms ?? null),
      receive_to_ack: span(r?.ack_median_ms ?? null, r?.ack_max_ms ?? null),
    };
  });
}
