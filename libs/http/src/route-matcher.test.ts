import type { Request } from 'express';
import { routeMatcher } from './route-matcher';

const request = (method: string, path: string) => ({ method, path }) as Request;

describe('routeMatcher', () => {
  const matches = routeMatcher([
    { method: 'POST', path: '/v1/tenants/:t/messages' },
    { method: 'GET', path: '/v1/tenants/:t/consumers/:c/messages' },
  ]);

  it('matches a route by method and path, as the bus routers route it', () => {
    expect(matches(request('POST', '/v1/tenants/w1/messages'))).toBe(true);
    expect(matches(request('GET', '/v1/tenants/w1/consumers/c1/messages'))).toBe(true);
    // HEAD is answered by GET routes.
    expect(matches(request('HEAD', '/v1/tenants/w1/consumers/c1/messages'))).toBe(true);
    // An encoded parameter is still one segment.
    expect(matches(request('POST', '/v1/tenants/w%2F1/messages'))).toBe(true);
  });

  it('matches nothing else: another method, a longer or shorter path, an empty parameter', () => {
    expect(matches(request('GET', '/v1/tenants/w1/messages'))).toBe(false);
    expect(matches(request('POST', '/v1/tenants/w1/consumers/c1/messages'))).toBe(false);
    expect(matches(request('POST', '/v1/tenants/w1/messages/extra'))).toBe(false);
    expect(matches(request('POST', '/v1/tenants/w1'))).toBe(false);
    expect(matches(request('POST', '/v1/tenants//messages'))).toBe(false);
    expect(matches(request('POST', '/v1/tenants/w1/iam/messages'))).toBe(false);
  });

  it('never throws on a parameter that does not decode, and matches it as one segment', () => {
    for (const parameter of ['%ZZ', '%ff%fe', '%C0%AF', '%E0%A4%A', '%']) {
      expect(matches(request('POST', `/v1/tenants/${parameter}/messages`))).toBe(true);
      expect(matches(request('GET', `/v1/tenants/${parameter}/nothing`))).toBe(false);
    }
  });

  it('matches paths exactly as the routers do: case-sensitive, no trailing slash', () => {
    expect(matches(request('POST', '/V1/Tenants/w1/MESSAGES'))).toBe(false);
    expect(matches(request('POST', '/v1/tenants/w1/messages/'))).toBe(false);
  });
});
