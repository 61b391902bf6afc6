import { openapi } from '@bus/schemas';
import { createOpenApiChecker, fetchObserved } from '@bus/testing';
import type { RunningBus } from './bus';

const busApi = createOpenApiChecker(openapi.bus);

/**
 * Calls a bus route with a bearer token (and a JSON body when given: an object is serialised, a
 * string or bytes sent as they are) and checks the answer against the bus's OpenAPI document.
 */
export async function bearerCall(bus: Pick<RunningBus, 'busUrl'>, method: string, path: string, bearer: string, body?: unknown) {
  const response = await fetchObserved(`${bus.busUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${bearer}`, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body) } : {}),
  });
  busApi.check(method, path, response);
  return response;
}
