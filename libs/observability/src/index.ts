export { createLogger } from './logger';
export type { Logger, LoggerOptions } from './logger';
export { createMetricsRegistry, Registry } from './metrics';
export { inSpan, publishTraceContext, startTracing, startTracingFromEnv } from './tracing';
export type { Tracing } from './tracing';
export { METRICS } from './metric-names';
export type { MetricKey } from './metric-names';
export { ACTIVITY_FLUSH_MS, ACTIVITY_OTHER_RULE, MAX_RULES_PER_CELL, createActivityRecorder } from './activity';
export type { ActivityRecorder, ActivityRecorderDeps, ActivityRow } from './activity';
