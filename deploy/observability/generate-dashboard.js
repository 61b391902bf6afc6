// Generates charts/message-bus/dashboards/message-bus.json (the Grafana dashboard shipped in the chart):
//   node deploy/observability/generate-dashboard.js > charts/message-bus/dashboards/message-bus.json
// Metric names and labels are the contract of docs/observability.md; test/chart.test.ts checks both agree.
'use strict';
const ns = 'namespace="$namespace"';
let id = 0;
const panels = [];
let y = 0;
function row(title) {
  panels.push({ type: 'row', title, id: ++id, collapsed: false, gridPos: { h: 1, w: 24, x: 0, y: y++ }, panels: [] });
}
function ts(title, description, targets, unit, x, w = 12, h = 8) {
  panels.push({
    type: 'timeseries',
    id: ++id,
    title,
    description,
    datasource: { type: 'prometheus', uid: '${datasource}' },
    gridPos: { h, w, x, y },
    fieldConfig: { defaults: { unit, custom: { drawStyle: 'line', lineWidth: 1, fillOpacity: 10, showPoints: 'never' } }, overrides: [] },
    options: { legend: { displayMode: 'table', placement: 'right', calcs: ['lastNotNull', 'max'] }, tooltip: { mode: 'multi', sort: 'desc' } },
    targets: targets.map(([expr, legendFormat], i) => ({
      refId: String.fromCharCode(65 + i),
      expr,
      legendFormat,
      datasource: { type: 'prometheus', uid: '${datasource}' },
    })),
  });
  if (x + w >= 24) y += h;
}
const publishRoutes = 'route=~"/v1/tenants/:t/messages|/v1/tenants/:t/iam/messages|/v1/jwt/messages|/v1/messages"';
row('Publish');
ts(
  'Publish rate by outcome',
  'bus_publish_total per outcome (accepted, duplicate, refused, error), publish and validate routes',
  [[`sum by (mode, outcome) (rate(bus_publish_total{${ns}}[$__rate_interval]))`, '{{mode}} {{outcome}}']],
  'reqps',
  0,
);
ts(
  'Refusals by rule',
  'bus_publish_total{outcome="refused"} per rule id (schema.*, sequence.*, policy.*, producer.*, ...)',
  [[`topk(15, sum by (rule) (rate(bus_publish_total{${ns}, outcome="refused"}[$__rate_interval])))`, '{{rule}}']],
  'reqps',
  12,
);
ts(
  'Publish latency p50 / p99',
  "http_request_duration_seconds of the gateway's publish routes",
  [
    [`histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{${ns}, app="gateway", ${publishRoutes}}[$__rate_interval])))`, 'p99'],
    [`histogram_quantile(0.50, sum by (le) (rate(http_request_duration_seconds_bucket{${ns}, app="gateway", ${publishRoutes}}[$__rate_interval])))`, 'p50'],
  ],
  's',
  0,
);
ts(
  'Token issuance',
  'bus_token_requests_total by outcome (issued, invalid_client, invalid_request, unsupported_grant_type, rate_limited, unavailable)',
  [[`sum by (outcome) (rate(bus_token_requests_total{${ns}}[$__rate_interval]))`, '{{outcome}}']],
  'reqps',
  12,
);
ts(
  '429 answers by rule and limit',
  'bus_rate_limited_total: rule rate.limited or quota.exceeded, limit = which limit of docs/api.md#limits',
  [[`sum by (app, rule, limit) (rate(bus_rate_limited_total{${ns}}[$__rate_interval]))`, '{{app}} {{rule}} {{limit}}']],
  'reqps',
  0,
);
ts(
  'Limiter decisions in process (Redis unreachable)',
  'bus_rate_limiter_fallback_total: should stay at zero',
  [[`sum by (app, limit) (rate(bus_rate_limiter_fallback_total{${ns}}[$__rate_interval]))`, '{{app}} {{limit}}']],
  'ops',
  12,
);
row('Delivery and consumer queues');
ts(
  'Queue depth per consumer',
  'bus_consumer_queue_depth: messages waiting to be received (max over delivery replicas)',
  [[`topk(20, max by (workspace, consumer) (bus_consumer_queue_depth{${ns}}))`, '{{workspace}}/{{consumer}}']],
  'short',
  0,
);
ts(
  'Oldest message age per consumer',
  'bus_consumer_queue_oldest_age_seconds',
  [[`topk(20, max by (workspace, consumer) (bus_consumer_queue_oldest_age_seconds{${ns}}))`, '{{workspace}}/{{consumer}}']],
  's',
  12,
);
ts(
  'In flight per consumer',
  'bus_consumer_queue_inflight: received, not yet acked, lease running',
  [[`topk(20, max by (workspace, consumer) (bus_consumer_queue_inflight{${ns}}))`, '{{workspace}}/{{consumer}}']],
  'short',
  0,
);
ts(
  'Delivery latency p50 / p99',
  'bus_delivery_latency_seconds: accepted by the gateway → in the consumer queues',
  [
    [`histogram_quantile(0.99, sum by (le) (rate(bus_delivery_latency_seconds_bucket{${ns}}[$__rate_interval])))`, 'p99'],
    [`histogram_quantile(0.50, sum by (le) (rate(bus_delivery_latency_seconds_bucket{${ns}}[$__rate_interval])))`, 'p50'],
  ],
  's',
  12,
);
ts(
  'Kafka consumer lag (records)',
  "bus_kafka_consumer_lag: log end offset − committed offset of delivery's group, per partition",
  [
    [`sum by (group, topic) (bus_kafka_consumer_lag{${ns}})`, '{{group}} {{topic}}'],
    [`max by (partition) (bus_kafka_consumer_lag{${ns}})`, 'partition {{partition}}'],
  ],
  'short',
  0,
);
ts(
  'Quarantined records',
  'bus_delivery_quarantined_total: Kafka records held back because Postgres has no matching accepted record (invariant A)',
  [
    [`sum by (reason) (increase(bus_delivery_quarantined_total{${ns}}[$__range]))`, '{{reason}} (in range)'],
    [`sum by (reason) (rate(bus_delivery_quarantined_total{${ns}}[$__rate_interval]))`, '{{reason}} /s'],
  ],
  'short',
  12,
);
row('HTTP and processes');
ts(
  'Requests by service and status',
  'http_requests_total',
  [[`sum by (app, status) (rate(http_requests_total{${ns}}[$__rate_interval]))`, '{{app}} {{status}}']],
  'reqps',
  0,
);
ts(
  '5xx ratio by service',
  'share of 5xx answers (alert BusHigh5xxRate)',
  [
    [
      `sum by (app) (rate(http_requests_total{${ns}, status=~"5.."}[$__rate_interval])) / sum by (app) (rate(http_requests_total{${ns}}[$__rate_interval]))`,
      '{{app}}',
    ],
  ],
  'percentunit',
  12,
);
ts(
  'p99 latency by service and route',
  'http_request_duration_seconds',
  [[`topk(10, histogram_quantile(0.99, sum by (app, route, le) (rate(http_request_duration_seconds_bucket{${ns}}[$__rate_interval]))))`, '{{app}} {{route}}']],
  's',
  0,
);
ts(
  'Event loop lag p99',
  'nodejs_eventloop_lag_p99_seconds per pod',
  [[`max by (component, pod) (nodejs_eventloop_lag_p99_seconds{${ns}})`, '{{component}} {{pod}}']],
  's',
  12,
);
ts(
  'Resident memory',
  'process_resident_memory_bytes per pod',
  [[`max by (component, pod) (process_resident_memory_bytes{${ns}})`, '{{component}} {{pod}}']],
  'bytes',
  0,
);
ts(
  'CPU',
  'process_cpu_seconds_total per pod',
  [[`sum by (component, pod) (rate(process_cpu_seconds_total{${ns}}[$__rate_interval]))`, '{{component}} {{pod}}']],
  'percentunit',
  12,
);
const dashboard = {
  uid: 'message-bus',
  title: 'Message bus',
  description: 'SOM 1.0 message bus: publish, tokens, limits, consumer queues, delivery, Kafka lag. Metric contract: docs/observability.md.',
  tags: ['message-bus'],
  editable: true,
  schemaVersion: 39,
  version: 1,
  timezone: 'utc',
  refresh: '30s',
  time: { from: 'now-3h', to: 'now' },
  graphTooltip: 1,
  templating: {
    list: [
      { name: 'datasource', label: 'Data source', type: 'datasource', query: 'prometheus', current: {}, hide: 0 },
      {
        name: 'namespace',
        label: 'Namespace',
        type: 'query',
        datasource: { type: 'prometheus', uid: '${datasource}' },
        query: { query: 'label_values(http_requests_total, namespace)', refId: 'namespace' },
        definition: 'label_values(http_requests_total, namespace)',
        refresh: 2,
        current: {},
        hide: 0,
        includeAll: false,
        multi: false,
        sort: 1,
      },
    ],
  },
  annotations: { list: [] },
  panels,
};
process.stdout.write(JSON.stringify(dashboard, null, 2) + '\n');
