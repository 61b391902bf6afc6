import { isAttackPattern } from './firewall';

describe('request firewall', () => {
  it.each([
    '/v1/health',
    '/v1/tenants/wabcdefghijk2/messages',
    '/v1/tenants/wabcdefghijk2/consumers/cabcdefghijk2/messages?max_messages=10&wait_seconds=20',
    '/api/skills/library?version=0.2.2',
    '/v1/files/report..final',
    '/v1/search?q=selection+from+the+union',
    '/v1/files/report..final%2Fv2',
    '/v1/files/%2E%2Fhidden',
    '/v1/search?q=caf%C3%A9&x=%ff',
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
    '/v1/x/..%2Fhealth',
    '/v1/x/..%2fhealth',
    '/v1/x%2F..%2Fhealth',
    '/v1/x/..%5Chealth',
    '/v1/x%5C..',
    '/v1/x/..%252Fhealth',
    '/v1/x?file=..%2F..%2Fetc%2Fpasswd',
    // A bad escape elsewhere in the query does not hide the rest from the patterns.
    '/v1/health?a=%ZZ&q=%3Cscript%3E',
    '/v1/health?a=%ff&q=1%20UNION%20SELECT%20password%20FROM%20users',
    '/v1/rules?x=<script>alert(1)</script>',
    "/v1/rules?id=1' OR '1'='1",
    '/v1/rules?id=1%20UNION%20SELECT%20password%20FROM%20users',
    `/v1/health?${'a'.repeat(2100)}`,
  ])('blocks %s', (target) => {
    expect(isAttackPattern(target)).toBe(true);
  });
});
