// The first import of main.ts: OpenTelemetry patches http as it loads, so it starts before anything else.
import { startTracingFromEnv } from '@bus/observability';

export const tracing = startTracingFromEnv('catalogue');
