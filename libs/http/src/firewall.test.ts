import { isAttackPattern } from './firewall';

describe('request firewall', () => {
  it.each([
    ['GET', '/v1/health'],
    ['POST', '/v1/tenants/wabcdefghijk2/messages'],
    ['GET', '/v1/tenants/wabcdefghijk2/consumers/cabcdefghijk2/messages?max_messages=10&wait_seconds=20'],
    ['GET', '/api/skills/library?version=0.2.2'],
    ['GET', '/v1/files/report..final'],
    ['GET', '/v1/search?q=selection+from+the+union'],
  ])('lets %s %s through', (method, target) => {
    expect(isAttackPattern(method, target)).toBe(false);
  });

  it.each([
    ['GET', '/v1/../../etc/passwd'],
    ['GET', '/v1/%2e%2e/%2e%2e/etc/passwd'],
    ['GET', '/v1/health%00.json'],
    ['GET', '/v1/health\u0000'],
    ['GET', '/v1/he\talth'],
    ['GET', '/v1/health%0d%0aSet-Cookie:x=1'],
    ['GET', '/v1/rules?x=<script>alert(1)</script>'],
    ['GET', "/v1/rules?id=1' OR '1'='1"],
    ['GET', '/v1/rules?id=1%20UNION%20SELECT%20password%20FROM%20users'],
    ['TRACE', '/v1/health'],
    ['GET', `/v1/health?${'a'.repeat(2100)}`],
  ])('blocks %s %s', (method, target) => {
    expect(isAttackPattern(method, target)).toBe(true);
  });
});
