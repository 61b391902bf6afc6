/**
 * The names, types and label names of every metric the bus exports: the one place they are written.
 * The code registering a metric spreads its entry (`new Counter({ ...METRICS.publish, help, registers })`),
 * deploy/observability/generate-dashboard.js reads this module compiled (dist/metric-names.js) to
 * write its queries, and test/chart.test.ts checks that the alert rules and the table of
 * docs/observability.md name only these, with these labels. A TypeScript module rather than a JSON
 * file so that a metric's label names are typed where it is observed (a misspelt label does not
 * compile); the generator runs after `tsc -b` like the benches.
 *
 * `type` is Prometheus's; label values stay bounded (docs/observability.md).
 */
export const METRICS = {
  httpRequests: { name: 'http_requests_total', type: 'counter', labelNames: ['app', 'method', 'route', 'status'] },
  httpRequestDuration: { name: 'http_request_duration_seconds', type: 'histogram', labelNames: ['app', 'method', 'route', 'status'] },
  requestStep: { name: 'bus_request_step_seconds', type: 'histogram', labelNames: ['app', 'route', 'step'] },
  publishBatchSize: { name: 'bus_publish_batch_size', type: 'histogram', labelNames: [] },
  publish: { name: 'bus_publish_total', type: 'counter', labelNames: ['mode', 'outcome', 'rule'] },
  refusalsRecorded: { name: 'bus_refusals_recorded_total', type: 'counter', labelNames: ['outcome'] },
  activityFlushes: { name: 'bus_activity_flushes_total', type: 'counter', labelNames: ['outcome'] },
  tokenRequests: { name: 'bus_token_requests_total', type: 'counter', labelNames: ['outcome'] },
  rateLimited: { name: 'bus_rate_limited_total', type: 'counter', labelNames: ['app', 'rule', 'limit'] },
  rateLimiterFallback: { name: 'bus_rate_limiter_fallback_total', type: 'counter', labelNames: ['app', 'limit'] },
  pullUnrenderable: { name: 'bus_pull_unrenderable_total', type: 'counter', labelNames: ['reason'] },
  consumerFaultsInjected: { name: 'bus_consumer_faults_injected_total', type: 'counter', labelNames: ['kind'] },
  deadLettersMoved: { name: 'bus_dead_letters_moved_total', type: 'counter', labelNames: [] },
  deadLettersResolved: { name: 'bus_dead_letters_resolved_total', type: 'counter', labelNames: ['resolution'] },
  quarantineRedrives: { name: 'bus_quarantine_redrives_total', type: 'counter', labelNames: ['outcome'] },
  queueDepth: { name: 'bus_queue_depth', type: 'gauge', labelNames: ['workspace', 'consumer'] },
  queueInFlight: { name: 'bus_queue_in_flight', type: 'gauge', labelNames: ['workspace', 'consumer'] },
  queueDeadLetters: { name: 'bus_queue_dead_letters', type: 'gauge', labelNames: ['workspace', 'consumer'] },
  queueOldestAge: { name: 'bus_queue_oldest_age_seconds', type: 'gauge', labelNames: ['workspace', 'consumer'] },
  deliveryLag: { name: 'bus_delivery_lag_seconds', type: 'histogram', labelNames: [] },
  deliveryEnqueued: { name: 'bus_delivery_enqueued_total', type: 'counter', labelNames: [] },
  deliveryQuarantined: { name: 'bus_delivery_quarantined_total', type: 'counter', labelNames: ['reason'] },
  deliveryQuarantineRedriven: { name: 'bus_delivery_quarantine_redriven_total', type: 'counter', labelNames: [] },
  kafkaConsumerLag: { name: 'bus_kafka_consumer_lag', type: 'gauge', labelNames: ['group', 'topic', 'partition'] },
  retentionRowsRemoved: { name: 'bus_retention_rows_removed_total', type: 'counter', labelNames: ['table'] },
  retentionSweepDuration: { name: 'bus_retention_sweep_duration_seconds', type: 'histogram', labelNames: ['table'] },
  retentionOldestRowAge: { name: 'bus_retention_oldest_row_age_seconds', type: 'gauge', labelNames: ['table'] },
  retentionWindow: { name: 'bus_retention_window_seconds', type: 'gauge', labelNames: ['table'] },
  processCpu: { name: 'process_cpu_seconds_total', type: 'counter', labelNames: [] },
  processResidentMemory: { name: 'process_resident_memory_bytes', type: 'gauge', labelNames: [] },
  eventLoopLagP99: { name: 'nodejs_eventloop_lag_p99_seconds', type: 'gauge', labelNames: [] },
} as const;

export type MetricKey = keyof typeof METRICS;
