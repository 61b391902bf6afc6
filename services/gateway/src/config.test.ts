import { loadConfig } from '@bus/config';
import { gatewayConfig } from './config';

describe('gateway config', () => {
  const key = { SIGNING_KEY_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') };

  it('bounds the publish commit at 5 s unless told otherwise', () => {
    expect(loadConfig(gatewayConfig, key).PUBLISH_COMMIT_TIMEOUT).toBe(5_000);
    expect(loadConfig(gatewayConfig, { ...key, PUBLISH_COMMIT_TIMEOUT: '2500ms' }).PUBLISH_COMMIT_TIMEOUT).toBe(2_500);
  });

  it('reads no managed-apps file and allows no http JWKS URL unless told otherwise', () => {
    expect(loadConfig(gatewayConfig, key)).toMatchObject({ MANAGED_APPS_FILE: undefined, IDENTITY_PROVIDER_ALLOW_HTTP_LOOPBACK: false });
  });

  it("takes the SigV4 region, skew and limit with the spec's defaults, refusing a region that is not one, naming the variable", () => {
    expect(loadConfig(gatewayConfig, key)).toMatchObject({
      AWS_SIGV4_REGION: 'us-east-1',
      AWS_SIGV4_MAX_SKEW: 300_000,
      AWS_SIGV4_LIMIT_PER_SECOND: 50,
      AWS_SIGV4_LIMIT_BURST: 100,
    });
    expect(() => loadConfig(gatewayConfig, { ...key, AWS_SIGV4_REGION: 'Europe' })).toThrow(/AWS_SIGV4_REGION: must be/);
    expect(() => loadConfig(gatewayConfig, { ...key, AWS_SIGV4_MAX_SKEW: '10m' })).toThrow(/AWS_SIGV4_MAX_SKEW/);
    expect(() => loadConfig(gatewayConfig, {})).toThrow(/SIGNING_KEY_ENCRYPTION_KEY: is required/);
  });

  it('refuses a bound that is no duration or over 20 s, naming the variable', () => {
    expect(() => loadConfig(gatewayConfig, { ...key, PUBLISH_COMMIT_TIMEOUT: '30s' })).toThrow(
      /PUBLISH_COMMIT_TIMEOUT: must be at least 100ms and at most 20s/,
    );
    expect(() => loadConfig(gatewayConfig, { ...key, PUBLISH_COMMIT_TIMEOUT: 'soon' })).toThrow(/PUBLISH_COMMIT_TIMEOUT: must be a duration/);
  });
});
