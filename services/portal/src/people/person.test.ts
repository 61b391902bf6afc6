import { SignInFailedError } from './errors';
import { MAX_GRANTS, NAME_MAX_CHARS, personOfClaims, SUBJECT_MAX_CHARS } from './person';

const HOUSE = 'ohouse2222222';
/** The n-th organisation id of the test (n < 676; letters only, as real ids may hold). */
const organisation = (n: number) => `oaaaaaaaaaa${String.fromCharCode(97 + Math.floor(n / 26), 97 + (n % 26))}`;

describe('personOfClaims', () => {
  it('takes the subject, the name (else the email, else the subject) and the grants of the access claim', () => {
    expect(personOfClaims({ sub: 'u1', name: 'Ann', email: 'ann@example.test', bus_access: [`viewer:${HOUSE}`] }, 'bus_access')).toEqual({
      subject: 'u1',
      name: 'Ann',
      grants: [{ role: 'viewer', organisationId: HOUSE }],
    });
    expect(personOfClaims({ sub: 'u1', name: ' ', email: 'ann@example.test', groups: 'operator' }, 'groups').name).toBe('ann@example.test');
    expect(personOfClaims({ sub: 'u1', groups: 'operator' }, 'groups').name).toBe('u1');
  });

  it('refuses a sign-in without roles, naming the claim it read', () => {
    expect(() => personOfClaims({ sub: 'u1', groups: ['admins'] }, 'groups')).toThrow(
      new SignInFailedError('your account has no roles for this bus (claim groups)'),
    );
  });

  it(`holds at most ${MAX_GRANTS} grants: a claim naming more organisations is refused, not cut`, () => {
    const claim = Array.from({ length: MAX_GRANTS + 1 }, (_, n) => `viewer:${organisation(n)}`);
    expect(new Set(claim).size).toBe(MAX_GRANTS + 1);
    expect(personOfClaims({ sub: 'u1', bus_access: claim.slice(0, MAX_GRANTS) }, 'bus_access').grants).toHaveLength(MAX_GRANTS);
    expect(() => personOfClaims({ sub: 'u1', bus_access: claim }, 'bus_access')).toThrow(
      new SignInFailedError(`your account has ${MAX_GRANTS + 1} roles for this bus, more than the ${MAX_GRANTS} a session holds (claim bus_access)`),
    );
    // The same grant repeated counts once.
    expect(personOfClaims({ sub: 'u1', bus_access: Array(5_000).fill(`viewer:${HOUSE}`) }, 'bus_access').grants).toHaveLength(1);
  });

  it('refuses a subject that is missing, not a string or longer than OpenID Connect allows', () => {
    for (const sub of [undefined, '', 42, 'x'.repeat(SUBJECT_MAX_CHARS + 1)]) {
      expect(() => personOfClaims({ sub, bus_access: 'operator' }, 'bus_access')).toThrow(SignInFailedError);
    }
    expect(personOfClaims({ sub: 'x'.repeat(SUBJECT_MAX_CHARS), bus_access: 'operator' }, 'bus_access').subject).toHaveLength(SUBJECT_MAX_CHARS);
  });

  it(`shortens a display name to ${NAME_MAX_CHARS} characters without splitting one`, () => {
    const name = personOfClaims({ sub: 'u1', name: '🙂'.repeat(NAME_MAX_CHARS + 50), bus_access: 'operator' }, 'bus_access').name;
    expect([...name]).toHaveLength(NAME_MAX_CHARS);
    expect(name).toBe('🙂'.repeat(NAME_MAX_CHARS));
  });
});
