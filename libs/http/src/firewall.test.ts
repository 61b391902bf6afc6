import { isAttackPattern } from './firewall';

describe('request firewall', () => {
  it.each([
    '/v1/health',
    '/v1/tenants/wabcdefghijk2/messages',
    '/v1/tenants/wabcdefghijk2/consumers/cabcdefghijk2/messages?max_messages=10&wait_seconds=20',
    '/api/skills/library?version=0.2.2',
    '/v1/files/report..final',
    '/v1/search?q=selection+from+the+union',
  ])('lets %s through', (target) => {
    expect(isAttackPattern(target)).toBe(false);
  });

  it.each([
    '/v1/../../etc/passwd',
    '/v1/%2e%2e/%2e%2e/etc/passwd',
    '/v1/health%00.json',
    '/v1/health\u0000',
    '/v1/he\talth',
    '/v1/health%0d%0aSet-Cookie:x=1',
    '/v1/rules?x=<script>alert(1)</script>',
    "/v1/rules?id=1' OR '1'='1",
    '/v1/rules?id=1%20UNION%20SELECT%20password%20FROM%20users',
    `/v1/health?${'a'.repeat(2100)}`,
  ])('blocks %s', (target) => {
    expect(isAttackPattern(target)).toBe(true);
  });
});
