import { loadConfig } from '@bus/config';
import { gatewayConfig } from './config';

describe('gateway config', () => {
  it('bounds the publish commit at 5 s unless told otherwise', () => {
    const defaults = { MANAGED_APPS_FILE: undefined, IDENTITY_PROVIDER_ALLOW_HTTP_LOOPBACK: false };
    expect(loadConfig(gatewayConfig, {})).toEqual({ PUBLISH_COMMIT_TIMEOUT: 5_000, ...defaults });
    expect(loadConfig(gatewayConfig, { PUBLISH_COMMIT_TIMEOUT: '2500ms' })).toEqual({ PUBLISH_COMMIT_TIMEOUT: 2_500, ...defaults });
  });

  it('refuses a bound that is no duration or over 20 s, naming the variable', () => {
    expect(() => loadConfig(gatewayConfig, { PUBLISH_COMMIT_TIMEOUT: '30s' })).toThrow(/PUBLISH_COMMIT_TIMEOUT: must be at least 100ms and at most 20s/);
    expect(() => loadConfig(gatewayConfig, { PUBLISH_COMMIT_TIMEOUT: 'soon' })).toThrow(/PUBLISH_COMMIT_TIMEOUT: must be a duration/);
  });
});
