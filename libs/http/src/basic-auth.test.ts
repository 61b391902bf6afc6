import { readBasicAuthorization } from './basic-auth';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

describe('readBasicAuthorization', () => {
  it('reads the user id and the password after the first colon', () => {
    expect(readBasicAuthorization(`Basic ${b64('operator:se:cret')}`)).toEqual({ kind: 'basic', userId: 'operator', password: 'se:cret' });
    expect(readBasicAuthorization(`basic  ${b64('a:b')} `)).toEqual({ kind: 'basic', userId: 'a', password: 'b' });
  });

  it('tells an absent header, another scheme and a malformed value apart', () => {
    expect(readBasicAuthorization(undefined)).toEqual({ kind: 'absent' });
    expect(readBasicAuthorization('Bearer abc')).toEqual({ kind: 'other-scheme' });
    expect(readBasicAuthorization('Basic')).toEqual({ kind: 'other-scheme' });
    for (const value of ['Basic !!!!', `Basic ${b64('no-colon')}`, `Basic ${b64('abc:def').slice(0, -1)}`]) {
      expect(readBasicAuthorization(value)).toEqual({ kind: 'malformed' });
    }
  });
});
