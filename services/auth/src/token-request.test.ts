import { OAuthError } from '@bus/http';
import { basicClientId, isFormContentType, parseBasic, parseTokenRequest } from './token-request';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (err) {
    if (err instanceof OAuthError) return `${err.status} ${err.error}`;
    throw err;
  }
  return 'ok';
};

describe('HTTP Basic client authentication (RFC 6749 §2.3.1)', () => {
  it('form-decodes each part after base64', () => {
    expect(parseBasic(`Basic ${b64('cabcdefghijk2:sbs_a%2Bb+c%3Ad')}`)).toEqual({ clientId: 'cabcdefghijk2', clientSecret: 'sbs_a+b c:d' });
    expect(parseBasic(`basic ${b64('c:s')}`)).toEqual({ clientId: 'c', clientSecret: 's' });
    expect(parseBasic(undefined)).toBeUndefined();
  });

  it.each([
    ['Bearer abc'],
    ['Basic'],
    ['Basic !!!!'],
    [`Basic ${b64('no-colon')}`],
    [`Basic ${b64(':secret')}`],
    [`Basic ${b64('c%G1:s')}`],
    [`Basic ${b64('abc:def').slice(0, -1)}`],
  ])('refuses %s with 400 invalid_request', (header) => {
    expect(refusal(() => parseBasic(header))).toBe('400 invalid_request');
    expect(basicClientId(header)).toBeUndefined();
  });
});

describe('token request', () => {
  const basic = `Basic ${b64('cabcdefghijk2:sbs_secret')}`;

  it('reads Basic or body credentials', () => {
    expect(parseTokenRequest(basic, 'grant_type=client_credentials')).toEqual({
      credentials: { clientId: 'cabcdefghijk2', clientSecret: 'sbs_secret' },
    });
    expect(parseTokenRequest(undefined, 'grant_type=client_credentials&client_id=cabcdefghijk2&client_secret=sbs_secret')).toEqual({
      credentials: { clientId: 'cabcdefghijk2', clientSecret: 'sbs_secret' },
    });
    expect(parseTokenRequest(undefined, 'grant_type=client_credentials&client_id=cabcdefghijk2')).toEqual({ credentials: null });
    // A scope is ignored: the connection decides what the token may do (docs/auth.md).
    expect(parseTokenRequest(basic, 'grant_type=client_credentials&scope=publish%20admin')).toEqual(parseTokenRequest(basic, 'grant_type=client_credentials'));
  });

  it('refuses two methods, a mismatching client_id, repeats, and other grants', () => {
    expect(refusal(() => parseTokenRequest(basic, 'grant_type=client_credentials&client_secret=x'))).toBe('400 invalid_request');
    expect(refusal(() => parseTokenRequest(basic, 'grant_type=client_credentials&client_id=czzzzzzzzzzzz'))).toBe('400 invalid_request');
    expect(refusal(() => parseTokenRequest(basic, 'grant_type=client_credentials&client_id=cabcdefghijk2'))).toBe('ok');
    expect(refusal(() => parseTokenRequest(basic, 'grant_type=client_credentials&scope=a&scope=b'))).toBe('400 invalid_request');
    expect(refusal(() => parseTokenRequest(basic, 'grant_type=password'))).toBe('400 unsupported_grant_type');
    expect(refusal(() => parseTokenRequest(basic, 'client_id=cabcdefghijk2'))).toBe('400 invalid_request');
  });

  it('knows the form content type with or without parameters', () => {
    expect(isFormContentType('application/x-www-form-urlencoded')).toBe(true);
    expect(isFormContentType('Application/X-WWW-Form-Urlencoded; charset=UTF-8')).toBe(true);
    expect(isFormContentType('application/json')).toBe(false);
    expect(isFormContentType(undefined)).toBe(false);
  });
});
