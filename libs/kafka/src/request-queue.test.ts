import './request-queue';

/** kafkajs' request queue, one per broker connection, as far as these tests drive it. */
interface RequestQueue {
  push(request: {
    entry: { correlationId: number; apiName: string; apiKey: number; apiVersion: number; resolve(): void; reject(): void };
    expectResponse: boolean;
    sendRequest(): void;
  }): void;
  fulfillRequest(response: { correlationId: number; payload: null; size: number }): void;
  maybeThrottle(milliseconds: number): void;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const RequestQueueClass = require('kafkajs/src/network/requestQueue') as new (options: object) => RequestQueue;

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** A queue as a connection makes it, and the correlation ids it has put on the wire, in order. */
function connectionQueue(maxInFlightRequests: number): {
  queue: RequestQueue;
  sent: number[];
  send(correlationId: number): void;
  answer(correlationId: number): void;
} {
  const queue = new RequestQueueClass({
    maxInFlightRequests,
    requestTimeout: 30_000,
    enforceRequestTimeout: false,
    clientId: 'test',
    broker: '127.0.0.1:9',
    logger: silent,
  });
  const sent: number[] = [];
  return {
    queue,
    sent,
    send: (correlationId) =>
      queue.push({
        entry: { correlationId, apiName: 'Produce', apiKey: 0, apiVersion: 7, resolve: () => undefined, reject: () => undefined },
        expectResponse: true,
        sendRequest: () => sent.push(correlationId),
      }),
    answer: (correlationId) => queue.fulfillRequest({ correlationId, payload: null, size: 0 }),
  };
}

describe("kafkajs' request queue, as @bus/kafka runs it", () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('schedules nothing once its requests are answered: an idle connection sets no timer (kafkajs 2.2.4 re-armed a 1 ms one forever)', () => {
    const { sent, send, answer } = connectionQueue(1);
    send(1);
    answer(1);
    expect(sent).toEqual([1]);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('sends a request held by the in-flight limit when the answer ahead of it frees the room, then goes idle', () => {
    const { sent, send, answer } = connectionQueue(1);
    send(1);
    send(2);
    expect(sent).toEqual([1]);
    answer(1);
    expect(sent).toEqual([1, 2]);
    answer(2);
    jest.advanceTimersByTime(10);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('sends a throttled request when the throttle ends, not before, then goes idle', () => {
    const { queue, sent, send, answer } = connectionQueue(10);
    queue.maybeThrottle(50);
    send(1);
    jest.advanceTimersByTime(49);
    expect(sent).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(sent).toEqual([1]);
    answer(1);
    expect(jest.getTimerCount()).toBe(0);
  });
});
