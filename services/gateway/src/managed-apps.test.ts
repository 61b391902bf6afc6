import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@bus/config';
import { ManagedAppsError, managedAppsOf, parseManagedApps } from './managed-apps';

const ids = { workspace_id: 'wabcdefghijk2', app_id: 'aabcdefghijk2', connection_id: 'cabcdefghijk2' };
const tokenEntry = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  ...ids,
  token_issuer: {
    issuer: 'https://login.example.com/',
    jwks_url: 'https://login.example.com/jwks',
    audience: 'message-bus',
    client_claim: 'azp',
    client_id: name,
    ...extra,
  },
});
const awsEntry = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  ...ids,
  aws: {
    role_arn: 'arn:aws:iam::123456789012:role/archive-sync',
    access_key_id: 'AKIAEXAMPLE0000001',
    secret_access_key_file: '/etc/bus/secrets/archive-sync',
    ...extra,
  },
});
const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const parse = (apps: unknown[], opts: { allowHttpLoopback?: boolean; secret?: () => string } = {}) =>
  parseManagedApps(JSON.stringify({ apps }), { allowHttpLoopback: opts.allowHttpLoopback ?? false, readSecret: opts.secret ?? (() => `${SECRET}\n`) });

describe('managed apps file', () => {
  it('reads token-issuer and AWS entries, with the providers’ defaults and the secret from its file', () => {
    const [token, aws] = parse([tokenEntry('newsroom-feed'), awsEntry('archive-sync')]);
    expect(token).toEqual({
      name: 'newsroom-feed',
      workspaceId: 'wabcdefghijk2',
      appId: 'aabcdefghijk2',
      connectionId: 'cabcdefghijk2',
      auth: {
        kind: 'token',
        clientId: 'newsroom-feed',
        issuer: {
          issuer: 'https://login.example.com/',
          jwksUrl: 'https://login.example.com/jwks',
          audiences: ['message-bus'],
          algorithms: ['RS256', 'PS256', 'ES256', 'EdDSA'],
          clientClaim: 'azp',
          clockToleranceSeconds: 60,
        },
      },
    });
    expect(aws?.auth).toEqual({
      kind: 'aws',
      roleArn: 'arn:aws:iam::123456789012:role/archive-sync',
      accessKeyId: 'AKIAEXAMPLE0000001',
      secretAccessKey: SECRET,
    });
  });

  it('names every bad entry and field in one error, and never quotes a secret', () => {
    let error: unknown;
    try {
      parse(
        [
          tokenEntry('hs', { algorithms: ['HS256'] }),
          tokenEntry('plain', { jwks_url: 'http://login.example.com/jwks' }),
          { ...awsEntry('short'), workspace_id: 'acme' },
          { name: 'both', ...ids, token_issuer: tokenEntry('x').token_issuer, aws: awsEntry('x').aws },
          tokenEntry('dup'),
          tokenEntry('dup'),
        ],
        { secret: () => 'tiny-secret' },
      );
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ManagedAppsError);
    const message = (error as Error).message;
    expect(message).toContain('apps[0] (hs): token_issuer: algorithms: HS256 not allowed');
    expect(message).toContain('apps[1] (plain): token_issuer: jwks_url must be https');
    expect(message).toContain('apps[2] (short): workspace_id must be a workspace id');
    expect(message).toContain('apps[2] (short): aws.secret_access_key_file /etc/bus/secrets/archive-sync must hold a secret of at least 16 characters');
    expect(message).toContain('apps[3] (both): needs exactly one of token_issuer');
    expect(message).toContain('dup: the name is used by dup already');
    expect(message).toContain('dup: the issuer and client_id is used by dup already');
    expect(message).not.toContain('tiny-secret');
  });

  it('takes http JWKS URLs to loopback only when allowed (tests)', () => {
    const local = tokenEntry('local', { jwks_url: 'http://127.0.0.1:8080/jwks' });
    expect(() => parse([local])).toThrow(/jwks_url must be https/);
    expect(parse([local], { allowHttpLoopback: true })).toHaveLength(1);
    expect(() => parse([tokenEntry('far', { jwks_url: 'http://login.example.com/jwks' })], { allowHttpLoopback: true })).toThrow(
      /http only to a loopback host/,
    );
  });

  it('is a ConfigError naming MANAGED_APPS_FILE when the file is missing or not a list of apps; none when unset', () => {
    const dir = mkdtempSync(join(tmpdir(), 'managed-apps-'));
    const file = join(dir, 'apps.yaml');
    writeFileSync(file, 'apps: nope\n');
    const of = (path: string | undefined) => managedAppsOf({ MANAGED_APPS_FILE: path, IDENTITY_PROVIDER_ALLOW_HTTP_LOOPBACK: false });
    expect(of(undefined)).toEqual([]);
    expect(() => of(file)).toThrow(ConfigError);
    expect(() => of(file)).toThrow(/MANAGED_APPS_FILE: must be a YAML mapping with an `apps:` list/);
    expect(() => of(join(dir, 'absent.yaml'))).toThrow(/MANAGED_APPS_FILE: .*absent\.yaml cannot be read \(ENOENT\)/);
  });
});
