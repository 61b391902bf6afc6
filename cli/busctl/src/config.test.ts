import { portalFrom } from './config';
import { UsageError } from './errors';

const CREDENTIALS = { BUSCTL_CLIENT_ID: 'operator', BUSCTL_CLIENT_SECRET: 's3cret:with:colons' };

describe('portalFrom', () => {
  it('defaults to the local portal and sends HTTP Basic (RFC 7617) with the operator credentials', () => {
    expect(portalFrom(CREDENTIALS, undefined)).toEqual({
      adminUrl: 'http://127.0.0.1:8090/api/admin',
      authorization: `Basic ${Buffer.from('operator:s3cret:with:colons').toString('base64')}`,
    });
  });

  it('takes BUSCTL_URL, and --url over it, keeping a path prefix', () => {
    expect(portalFrom({ ...CREDENTIALS, BUSCTL_URL: 'https://portal.example/' }, undefined).adminUrl).toBe('https://portal.example/api/admin');
    expect(portalFrom({ ...CREDENTIALS, BUSCTL_URL: 'https://portal.example' }, 'http://127.0.0.1:9/bus//').adminUrl).toBe('http://127.0.0.1:9/bus/api/admin');
    expect(portalFrom({ ...CREDENTIALS, BUSCTL_URL: '' }, undefined).adminUrl).toBe('http://127.0.0.1:8090/api/admin');
  });

  it.each<[Record<string, string>, string | undefined, string]>([
    [{ BUSCTL_CLIENT_SECRET: 'x' }, undefined, 'BUSCTL_CLIENT_ID is not set: the operator client id'],
    [{ BUSCTL_CLIENT_ID: '', BUSCTL_CLIENT_SECRET: 'x' }, undefined, 'BUSCTL_CLIENT_ID is not set: the operator client id'],
    [{ BUSCTL_CLIENT_ID: 'x' }, undefined, 'BUSCTL_CLIENT_SECRET is not set: the operator client secret'],
    [{ ...CREDENTIALS, BUSCTL_URL: 'portal:8090' }, undefined, "the portal URL must be http or https, not 'portal:8090'"],
    [{ ...CREDENTIALS, BUSCTL_URL: 'not a url' }, undefined, "BUSCTL_URL is not a URL: 'not a url'"],
    [CREDENTIALS, '::', "--url is not a URL: '::'"],
    [CREDENTIALS, 'ftp://portal', "the portal URL must be http or https, not 'ftp://portal'"],
    [CREDENTIALS, 'http://op:pw@portal', 'the portal URL must not carry credentials: set BUSCTL_CLIENT_ID and BUSCTL_CLIENT_SECRET'],
  ])('refuses %j with --url %p: %s', (env, url, message) => {
    expect(() => portalFrom(env, url)).toThrow(new UsageError(message));
  });
});
