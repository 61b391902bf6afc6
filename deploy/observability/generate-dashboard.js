// Generates charts/message-bus/dashboards/message-bus.json (the Grafana dashboard shipped in the chart):
//   node deploy/observability/generate-dashboard.js > charts/message-bus/dashboards/message-bus.json
// Metric names come from libs/observability/src/metric-names.ts (compiled: run `npx tsc -b` first), the
// one list the code registering the metrics uses too; test/chart.test.ts checks the result.
'use strict';
const path = require('node:path');
const { METRICS: M } = require(path.join(__dirname, '..', '..', 'libs', 'observability', 'dist', 'metric-names.js'));
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
  `${M.publish.name} per outcome (accepted, duplicate, refused, error), publish and validate routes`,
  [[`sum by (mode, outcome) (rate(${M.publish.name}{${ns}}[$__rate_interval]))`, '{{mode}} {{outcome}}']],
  'reqps',
  0,
);
ts(
  'Refusals by rule',
  `${M.publish.name}{outcome="refused"} per rule id (schema.*, sequence.*, policy.*, producer.*, ...)`,
  [[`topk(15, sum by (rule) (rate(${M.publish.name}{${ns}, outcome="refused"}[$__rate_interval])))`, '{{rule}}']],
  'reqps',
  12,
);
ts(
  'Publish latency p50 / p99',
  `${M.httpRequestDuration.name} of the publish routes (the gateway's, whichever process serves them)`,
  [
    [`histogram_quantile(0.99, sum by (le) (rate(${M.httpRequestDuration.name}_bucket{${ns}, ${publishRoutes}}[$__rate_interval])))`, 'p99'],
    [`histogram_quantile(0.50, sum by (le) (rate(${M.httpRequestDuration.name}_bucket{${ns}, ${publishRoutes}}[$__rate_interval])))`, 'p50'],
  ],
  's',
  0,
);
ts(
  'Token issuance',
  `${M.tokenRequests.name} by outcome (issued, invalid_client, invalid_request, unsupported_grant_type, rate_limited, unavailable)`,
  [[`sum by (outcome) (rate(${M.tokenRequests.name}{${ns}}[$__rate_interval]))`, '{{outcome}}']],
  'reqps',
  12,
);
ts(
  '429 answers by rule and limit',
  `${M.rateLimited.name}: rule rate.limited or quota.exceeded, limit = which limit of docs/api.md#limits`,
  [[`sum by (app, rule, limit) (rate(${M.rateLimited.name}{${ns}}[$__rate_interval]))`, '{{app}} {{rule}} {{limit}}']],
  'reqps',
  0,
);
ts(
  'Limiter decisions in process (Redis unreachable)',
  `${M.rateLimiterFallback.name}: should stay at zero`,
  [[`sum by (app, limit) (rate(${M.rateLimiterFallback.name}{${ns}}[$__rate_interval]))`, '{{app}} {{limit}}']],
  'ops',
  12,
);
row('Delivery and consumer queues');
ts(
  'Queue depth per consumer',
  `${M.queueDepth.name}: messages waiting to be received (max over delivery replicas)`,
  [[`topk(20, max by (workspace, consumer) (${M.queueDepth.name}{${ns}}))`, '{{workspace}}/{{consumer}}']],
  'short',
  0,
);
ts(
  'Oldest message age per consumer',
  `${M.queueOldestAge.name}`,
  [[`topk(20, max by (workspace, consumer) (${M.queueOldestAge.name}{${ns}}))`, '{{workspace}}/{{consumer}}']],
  's',
  12,
);
ts(
  'In flight per consumer',
  `${M.queueInFlight.name}: received, not yet acked, lease running`,
  [[`topk(20, max by (workspace, consumer) (${M.queueInFlight.name}{${ns}}))`, '{{workspace}}/{{consumer}}']],
  'short',
  0,
);
ts(
  'Delivery latency p50 / p99',
  `${M.deliveryLag.name}: accepted by the gateway → in the consumer queues`,
  [
    [`histogram_quantile(0.99, sum by (le) (rate(${M.deliveryLag.name}_bucket{${ns}}[$__rate_interval])))`, 'p99'],
    [`histogram_quantile(0.50, sum by (le) (rate(${M.deliveryLag.name}_bucket{${ns}}[$__rate_interval])))`, 'p50'],
  ],
  's',
  12,
);
ts(
  'Kafka consumer lag (records)',
  `${M.kafkaConsumerLag.name}: log end offset − committed offset of delivery's group, per partition`,
  [
    [`sum by (group, topic) (max by (group, topic, partition) (${M.kafkaConsumerLag.name}{${ns}}))`, '{{group}} {{topic}}'],
    [`max by (partition) (${M.kafkaConsumerLag.name}{${ns}})`, 'partition {{partition}}'],
  ],
  'short',
  0,
);
// workspace.unknown apart: on a shared topic other environments' records are expected and would
// drown the quarantines (alert BusDeliveryQuarantineGrowing leaves them out too).
const quarantined = `${M.deliveryQuarantined.name}{${ns}, reason!="workspace.unknown"}`;
const foreign = `${M.deliveryQuarantined.name}{${ns}, reason="workspace.unknown"}`;
ts(
  'Quarantined records',
  `${M.deliveryQuarantined.name}: Kafka records held back because Postgres has no matching accepted record (invariant A), stored and logged (alert BusDeliveryQuarantineGrowing)`,
  [
    [`sum by (reason) (increase(${quarantined}[$__range]))`, '{{reason}} (in range)'],
    [`sum by (reason) (rate(${quarantined}[$__rate_interval]))`, '{{reason}} /s'],
  ],
  'short',
  12,
);
ts(
  'Records of unknown workspaces',
  `${M.deliveryQuarantined.name}{reason="workspace.unknown"}: records of workspaces this database does not have, i.e. another environment's or a dropped test database's on a shared topic; counted, not stored, not logged`,
  [[`sum(rate(${foreign}[$__rate_interval]))`, 'workspace.unknown /s']],
  'short',
  0,
  24,
);
row('HTTP and processes');
ts(
  'Requests by service and status',
  `${M.httpRequests.name}`,
  [[`sum by (app, status) (rate(${M.httpRequests.name}{${ns}}[$__rate_interval]))`, '{{app}} {{status}}']],
  'reqps',
  0,
);
ts(
  '5xx ratio by service',
  'share of 5xx answers (alert BusHigh5xxRate)',
  [
    [
      `sum by (app) (rate(${M.httpRequests.name}{${ns}, status=~"5.."}[$__rate_interval])) / sum by (app) (rate(${M.httpRequests.name}{${ns}}[$__rate_interval]))`,
      '{{app}}',
    ],
  ],
  'percentunit',
  12,
);
ts(
  'p99 latency by service and route',
  `${M.httpRequestDuration.name}`,
  [[`topk(10, histogram_quantile(0.99, sum by (app, route, le) (rate(${M.httpRequestDuration.name}_bucket{${ns}}[$__rate_interval]))))`, '{{app}} {{route}}']],
  's',
  0,
);
ts(
  'Event loop lag p99',
  `${M.eventLoopLagP99.name} per pod`,
  [[`max by (component, pod) (${M.eventLoopLagP99.name}{${ns}})`, '{{component}} {{pod}}']],
  's',
  12,
);
ts(
  'Resident memory',
  `${M.processResidentMemory.name} per pod`,
  [[`max by (component, pod) (${M.processResidentMemory.name}{${ns}})`, '{{component}} {{pod}}']],
  'bytes',
  0,
);
ts(
  'CPU',
  `${M.processCpu.name} per pod`,
  [[`sum by (component, pod) (rate(${M.processCpu.name}{${ns}}[$__rate_interval]))`, '{{component}} {{pod}}']],
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
        query: { query: `label_values(${M.httpRequests.name}, namespace)`, refId: 'namespace' },
        definition: `label_values(${M.httpRequests.name}, namespace)`,
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
