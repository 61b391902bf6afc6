/**
 * Also the enqueue's first CTE (enqueue.ts). The messages' exact bytes, each stored once whoever enqueues it first (invariant E): one insert of
 * the arrays `messageArrays` binds, whatever the batch's size (a multi-row VALUES list was a new
 * statement text, parsed and planned, for every batch size — pg_stat_statements, bench:publish). The
 * bodies go as one binary parameter, each cut out by its start and length: an array of bodies went as
 * text, twice their size in hex, which Postgres parsed character by character (`array_in`,
 * `hex_decode`: ~5 % of its CPU at 64 publishes in flight).
 */
export const STORE_MESSAGES_ONCE = `INSERT INTO messages
       (workspace_id, message_id, body, message_type, correlation_id, published_at, kafka_partition, kafka_offset, traceparent)
     SELECT m.workspace_id, m.message_id, substring(:bodies::bytea FROM m.body_start FOR m.body_length), m.message_type, m.correlation_id,
            m.published_at, m.kafka_partition, m.kafka_offset, m.traceparent
       FROM unnest(:workspaceIds::text[], :messageIds::text[], :bodyStarts::int[], :bodyLengths::int[], :messageTypes::text[],
                   :correlationIds::text[], :publishedAts::timestamptz[], :kafkaPartitions::int[], :kafkaOffsets::bigint[], :traceparents::text[])
         AS m(workspace_id, message_id, body_start, body_length, message_type, correlation_id, published_at, kafka_partition, kafka_offset, traceparent)
     ON CONFLICT (workspace_id, message_id) DO NOTHING`;
