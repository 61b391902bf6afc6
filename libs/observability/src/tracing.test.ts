import { defaultTextMapGetter, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { boundedTraceContext, queryRedacting, TRACEPARENT_MAX_CHARS } from './tracing';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';
const propagator = boundedTraceContext();
/** The caller's span as the bus would continue it from `headers`, or undefined for a fresh trace. */
const continued = (headers: Record<string, string | string[]>) => trace.getSpanContext(propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter));

describe('boundedTraceContext', () => {
  it('continues a well-formed traceparent, its tracestate kept', () => {
    expect(continued({ traceparent: `00-${TRACE_ID}-${SPAN_ID}-01`, tracestate: 'vendor=value' })).toMatchObject({
      traceId: TRACE_ID,
      spanId: SPAN_ID,
      traceFlags: 1,
      isRemote: true,
    });
    expect(continued({ traceparent: `00-${TRACE_ID}-${SPAN_ID}-01`, tracestate: 'vendor=value' })?.traceState?.get('vendor')).toBe('value');
  });

  it('reads a later version up to the bound, as W3C Trace Context asks', () => {
    const later = `01-${TRACE_ID}-${SPAN_ID}-01-`;
    expect(continued({ traceparent: later.padEnd(TRACEPARENT_MAX_CHARS, 'x') })?.traceId).toBe(TRACE_ID);
  });

  it.each([
    ['no traceparent', {}],
    ['garbage', { traceparent: 'garbage' }],
    ['upper-case hex', { traceparent: `00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01` }],
    ['an all-zero trace id', { traceparent: `00-${'0'.repeat(32)}-${SPAN_ID}-01` }],
    ['an all-zero span id', { traceparent: `00-${TRACE_ID}-${'0'.repeat(16)}-01` }],
    ['version ff', { traceparent: `ff-${TRACE_ID}-${SPAN_ID}-01` }],
    ['version 00 with more fields', { traceparent: `00-${TRACE_ID}-${SPAN_ID}-01-more` }],
    ['a later version over the bound', { traceparent: `01-${TRACE_ID}-${SPAN_ID}-01-`.padEnd(TRACEPARENT_MAX_CHARS + 1, 'x') }],
    ['two traceparent headers', { traceparent: [`00-${TRACE_ID}-${SPAN_ID}-01`, `00-${TRACE_ID}-${SPAN_ID}-01`] }],
    ['two joined into one', { traceparent: `00-${TRACE_ID}-${SPAN_ID}-01, 00-${TRACE_ID}-${SPAN_ID}-01` }],
  ])('ignores %s: the request starts a fresh trace', (_what, headers) => {
    expect(continued(headers)).toBeUndefined();
  });

  it('writes the version-00 traceparent of the active span, whatever the caller sent', () => {
    const carrier: Record<string, string> = {};
    const context = trace.setSpanContext(ROOT_CONTEXT, { traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 1 });
    propagator.inject(context, carrier, { set: (c, key, value) => (c[key] = value) });
    expect(carrier).toEqual({ traceparent: `00-${TRACE_ID}-${SPAN_ID}-01` });
  });
});

describe('queryRedacting', () => {
  const SECRET = 'SECRET-4f1c';
  const exported = () => {
    const exporter = new InMemorySpanExporter();
    const tracer = new TracerProvider({ spanProcessors: [queryRedacting(), new SimpleSpanProcessor({ exporter })] }).getTracer('test');
    return { tracer, spans: () => exporter.getFinishedSpans() };
  };

  it('drops every value of the query in the URL attributes a span starts with, keeping the names', () => {
    const { tracer, spans } = exported();
    tracer
      .startSpan('GET', {
        attributes: {
          'url.path': '/portal/callback',
          'url.query': `code=${SECRET}&state=${SECRET}&flag`,
          'url.full': `https://idp.example/token?access_token=${SECRET}#${SECRET}`,
          'http.target': `/v1/tenants/t/messages?access_token=${SECRET}`,
          'http.url': `http://bus.example/x?a=${SECRET}`,
        },
      })
      .end();
    expect(spans()[0]!.attributes).toEqual({
      'url.path': '/portal/callback',
      'url.query': 'code=REDACTED&state=REDACTED&flag=REDACTED',
      'url.full': 'https://idp.example/token?access_token=REDACTED',
      'http.target': '/v1/tenants/t/messages?access_token=REDACTED',
      'http.url': 'http://bus.example/x?a=REDACTED',
    });
  });

  it('also redacts what is set after the start, and a name that is no name (a token sent bare)', () => {
    const { tracer, spans } = exported();
    const span = tracer.startSpan('GET');
    span.setAttribute('url.query', `${SECRET}.${'x'.repeat(40)}&wait_seconds=20`);
    span.end();
    expect(spans()[0]!.attributes['url.query']).toBe('REDACTED&wait_seconds=REDACTED');
    expect(JSON.stringify(spans()[0]!.attributes)).not.toContain(SECRET);
  });
});
