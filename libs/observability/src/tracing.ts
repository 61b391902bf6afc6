import { NodeSDK } from '@opentelemetry/sdk-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';

export interface Tracing {
  readonly enabled: boolean;
  shutdown(): Promise<void>;
}

/**
 * OpenTelemetry, off unless an OTLP/HTTP endpoint is configured: with no endpoint nothing is
 * registered and the @opentelemetry/api calls in the code are no-ops.
 */
export function startTracing(opts: { serviceName: string; otlpEndpoint: string | undefined }): Tracing {
  if (!opts.otlpEndpoint) return { enabled: false, shutdown: async () => {} };
  const sdk = new NodeSDK({
    serviceName: opts.serviceName,
    traceExporter: new OTLPTraceExporter({ url: `${opts.otlpEndpoint.replace(/\/$/, '')}/v1/traces` }),
    instrumentations: [new HttpInstrumentation()],
  });
  sdk.start();
  return { enabled: true, shutdown: () => sdk.shutdown() };
}
