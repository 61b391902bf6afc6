import type { NextFunction, Request, Response } from 'express';
import { refuseUnmetPreconditions } from './admin-preconditions';

function outcome(method: string, headers: Record<string, string>): string {
  let passed: unknown = 'not called';
  const req = { method, header: (name: string) => headers[name.toLowerCase()] } as unknown as Request;
  refuseUnmetPreconditions(req, {} as Response, ((err?: unknown) => (passed = err)) as NextFunction);
  return passed === undefined ? 'performed' : `${(passed as { status: number; rule: string }).status} ${(passed as { rule: string }).rule}`;
}

describe('refuseUnmetPreconditions', () => {
  it('refuses a change whose If-Match names an entity tag: none is kept, so it never holds', () => {
    expect(outcome('PUT', { 'if-match': '"v1"' })).toBe('412 admin.precondition_failed');
    expect(outcome('POST', { 'if-match': 'W/"x", "y"' })).toBe('412 admin.precondition_failed');
    expect(outcome('DELETE', { 'if-match': '"v1"' })).toBe('412 admin.precondition_failed');
    expect(outcome('PUT', { 'if-match': '*' })).toBe('performed');
  });

  it('refuses If-None-Match: * on a PUT (its resource exists) and performs what has no unmet condition', () => {
    expect(outcome('PUT', { 'if-none-match': '*' })).toBe('412 admin.precondition_failed');
    expect(outcome('PUT', { 'if-none-match': '"v1"' })).toBe('performed');
    expect(outcome('PUT', { 'if-unmodified-since': 'Mon, 01 Jan 1990 00:00:00 GMT' })).toBe('performed');
    expect(outcome('PUT', {})).toBe('performed');
  });

  it('leaves reads alone', () => {
    expect(outcome('GET', { 'if-match': '"v1"' })).toBe('performed');
    expect(outcome('HEAD', { 'if-none-match': '*' })).toBe('performed');
  });
});
