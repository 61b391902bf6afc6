// The local identity provider of `npm run up` and the browser tests (docs/portal.md): oidc-provider on
// loopback with four demo people, whose sign-in form takes the person's login and any password. Never
// for a deployment: the chart points the portal at the operator's real provider.
//
// Environment: OIDC_PORT (default 8093), OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, OIDC_REDIRECT_URL (the
// portal's /portal/callback). Prints the demo people, then `oidc provider ready <issuer>`.
import Provider from 'oidc-provider';

const DEMO_HOUSE = 'odemohouse222';
const DEMO_VENDOR = 'odemovendor22';
/** login → the claims the portal reads: name, email and bus_access (operator, or role:organisation id). */
export const DEMO_PEOPLE = {
  operator: { name: 'Olive Operator', bus_access: ['operator'] },
  'house-admin': { name: 'Hana House-Admin', bus_access: [`house_admin:${DEMO_HOUSE}`] },
  vendor: { name: 'Vic Vendor', bus_access: [`vendor:${DEMO_VENDOR}`] },
  viewer: { name: 'Vera Viewer', bus_access: [`viewer:${DEMO_HOUSE}`] },
};

const port = Number(process.env.OIDC_PORT ?? 8093);
const redirectUrl = process.env.OIDC_REDIRECT_URL ?? 'http://127.0.0.1:8090/portal/callback';
const issuer = `http://127.0.0.1:${port}`;
const provider = new Provider(issuer, {
  clients: [
    {
      client_id: process.env.OIDC_CLIENT_ID ?? 'bus-portal',
      client_secret: process.env.OIDC_CLIENT_SECRET ?? 'local-portal-client-secret',
      redirect_uris: [redirectUrl],
      // The portal's sign-out ends this provider's session too (RP-initiated logout) and returns to the portal.
      post_logout_redirect_uris: [new URL('/portal', redirectUrl).href],
      grant_types: ['authorization_code'],
      response_types: ['code'],
    },
  ],
  claims: { openid: ['sub', 'bus_access'], profile: ['name'], email: ['email'] },
  // The portal reads the access claim from the ID token (and from userinfo where a provider puts it there).
  conformIdTokenClaims: false,
  pkce: { required: () => true },
  cookies: { keys: ['local-demo-provider-cookie-key'] },
  async findAccount(_ctx, id) {
    const person = DEMO_PEOPLE[id];
    if (!person) return undefined;
    return { accountId: id, claims: async () => ({ sub: id, email: `${id}@demo.invalid`, ...person }) };
  },
});
// Unknown logins get the provider's error page, not a session.
provider.listen(port, '127.0.0.1', () => {
  process.stdout.write('demo people (login with any password):\n');
  for (const [login, person] of Object.entries(DEMO_PEOPLE)) process.stdout.write(`  ${login.padEnd(12)} ${person.name}: ${person.bus_access.join(', ')}\n`);
  process.stdout.write(`oidc provider ready ${issuer}\n`);
});
