import { randomBytes } from 'node:crypto';
import { ACCESS_KEY_ID_PATTERN, CHALLENGE_PATTERN, newAccessKeyId, newChallenge, newSecretAccessKey, ROLE_ARN_PATTERN } from './principals';
import { seal, SealingError, unseal } from './sealing';

describe('AWS principal credentials', () => {
  it('issues 20-character AKIA access key ids, 40-character secrets and sbc_ challenges, all distinct', () => {
    const ids = new Set(Array.from({ length: 200 }, newAccessKeyId));
    expect(ids.size).toBe(200);
    for (const id of ids) expect(id).toMatch(ACCESS_KEY_ID_PATTERN);
    expect(newSecretAccessKey()).toMatch(/^[A-Za-z0-9+/]{40}$/);
    expect(newChallenge()).toMatch(CHALLENGE_PATTERN);
  });

  it.each([
    ['arn:aws:iam::123456789012:role/publisher', true],
    ['arn:aws:iam::123456789012:role/service-role/team/pub+lisher@x=1,2.3', true],
    ['arn:aws-cn:iam::123456789012:role/p', true],
    ['arn:aws:iam::12345678901:role/p', false],
    ['arn:aws:iam::123456789012:user/p', false],
    ['arn:aws:sts::123456789012:assumed-role/p/session', false],
    ['arn:aws:iam::123456789012:role/', false],
    [`arn:aws:iam::123456789012:role/${'x'.repeat(65)}`, false],
    ['arn:aws:iam::123456789012:role/a b', false],
  ])('role ARN %s is %s', (arn, valid) => {
    expect(ROLE_ARN_PATTERN.test(arn)).toBe(valid);
  });

  it('seals a secret bound to its row; another key or row cannot open it', () => {
    const key = randomBytes(32);
    const sealed = seal(Buffer.from('secret'), 'AKIAEXAMPLE', key);
    expect(sealed).not.toContain('secret');
    expect(unseal(sealed, 'AKIAEXAMPLE', key).toString()).toBe('secret');
    expect(() => unseal(sealed, 'AKIAOTHER', key)).toThrow(SealingError);
    expect(() => unseal(sealed, 'AKIAEXAMPLE', randomBytes(32))).toThrow(SealingError);
    expect(() => seal(Buffer.from('x'), 'b', randomBytes(16))).toThrow(SealingError);
  });
});
