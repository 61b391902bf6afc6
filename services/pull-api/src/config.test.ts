import { randomBytes } from 'node:crypto';
import { loadConfig } from '@bus/config';
import { pullApiConfig } from './config';

describe('pull API config', () => {
  it('reads RECEIPT_HANDLE_KEY as base64 of at least 32 bytes', () => {
    const key = randomBytes(32);
    const env = { RECEIPT_HANDLE_KEY: key.toString('base64'), SIGNING_KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64') };
    expect(loadConfig(pullApiConfig, env).RECEIPT_HANDLE_KEY.equals(key)).toBe(true);
  });

  it('refuses a missing, short or non-base64 key without echoing it', () => {
    for (const env of [{}, { RECEIPT_HANDLE_KEY: randomBytes(16).toString('base64') }, { RECEIPT_HANDLE_KEY: 'secret-marker!!' }]) {
      let message = '';
      try {
        loadConfig(pullApiConfig, env);
      } catch (err) {
        message = String(err);
      }
      expect(message).toMatch(/RECEIPT_HANDLE_KEY/);
      expect(message).not.toContain('secret-marker');
    }
  });
});
