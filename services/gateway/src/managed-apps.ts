import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from '@bus/config';
import {
  CLIENT_CLAIMS,
  DEFAULT_CLOCK_TOLERANCE_SECONDS,
  DEFAULT_EXTERNAL_ALGORITHMS,
  externalIssuerProblems,
  type ClientClaim,
  type ExternalAlgorithm,
  type ExternalIssuer,
} from '@bus/tokens';

/**
 * Operator-managed apps (docs/api.md#routes /v1/jwt/messages and /v1/messages; docs/auth.md "Operator-managed
 * apps"): the operator lists them in a YAML file (MANAGED_APPS_FILE; the chart mounts it from a
 * ConfigMap, the AWS secrets from a Secret). Each names its workspace, app and producer connection —
 * the workspace comes from here, never from a path — and how it authenticates: a token issuer for
 * POST /v1/jwt/messages, or an AWS role with an access key for POST /v1/messages (SigV4).
 */
export interface ManagedApp {
  /** The entry's name: errors and logs name it. */
  name: string;
  workspaceId: string;
  appId: string;
  /** The producer connection its publishes are made, counted (quota) and recorded (refusals, trace) as. */
  connectionId: string;
  auth: ManagedTokenAuth | ManagedAwsAuth;
}

export interface ManagedTokenAuth {
  kind: 'token';
  issuer: ExternalIssuer;
  /** The value the issuer's client claim carries in this app's tokens. */
  clientId: string;
}

export interface ManagedAwsAuth {
  kind: 'aws';
  roleArn: string;
  accessKeyId: string;
  /** Read from `secret_access_key_file` at start-up; never logged. */
  secretAccessKey: string;
}

const ID = (prefix: string) => new RegExp(`^${prefix}[a-z2-7]{12}$`);
const NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;
const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/;
const ACCESS_KEY_ID = /^[A-Z0-9]{16,128}$/;
const APP_KEYS = new Set(['name', 'workspace_id', 'app_id', 'connection_id', 'token_issuer', 'aws']);
const TOKEN_KEYS = new Set(['issuer', 'jwks_url', 'audience', 'client_claim', 'client_id', 'algorithms', 'clock_tolerance_seconds']);
const AWS_KEYS = new Set(['role_arn', 'access_key_id', 'secret_access_key_file']);

export class ManagedAppsError extends Error {
  override readonly name = 'ManagedAppsError';
}

/**
 * The managed apps of a YAML document: `apps:` a list of entries. Every problem is collected and
 * named by its entry (`apps[2] (archive-sync): …`), so one round of fixes suffices. `readSecret`
 * reads an AWS entry's secret file (a Secret's mounted key).
 */
export function parseManagedApps(text: string, opts: { allowHttpLoopback: boolean; readSecret: (path: string) => string }): ManagedApp[] {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new ManagedAppsError(`is not YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!isObject(doc) || !Array.isArray(doc.apps)) throw new ManagedAppsError('must be a YAML mapping with an `apps:` list');
  const problems: string[] = [];
  const apps: ManagedApp[] = [];
  doc.apps.forEach((raw: unknown, index: number) => {
    const label = isObject(raw) && typeof raw.name === 'string' ? `apps[${index}] (${raw.name})` : `apps[${index}]`;
    const own: string[] = [];
    const app = entryOf(raw, own, opts);
    problems.push(...own.map((p) => `${label}: ${p}`));
    if (app) apps.push(app);
  });
  problems.push(...duplicates(apps));
  if (problems.length > 0) throw new ManagedAppsError(problems.join('; '));
  return apps;
}

function entryOf(raw: unknown, problems: string[], opts: { allowHttpLoopback: boolean; readSecret: (path: string) => string }): ManagedApp | undefined {
  if (!isObject(raw)) {
    problems.push('must be a mapping');
    return undefined;
  }
  unknownKeys(raw, APP_KEYS, '', problems);
  const name = text(raw, 'name', NAME, problems, 'lowercase letters, digits, . _ -; at most 63');
  const workspaceId = text(raw, 'workspace_id', ID('w'), problems, 'a workspace id');
  const appId = text(raw, 'app_id', ID('a'), problems, 'an app id');
  const connectionId = text(raw, 'connection_id', ID('c'), problems, 'a producer connection id of the app');
  const hasToken = raw.token_issuer !== undefined;
  const hasAws = raw.aws !== undefined;
  if (hasToken === hasAws) {
    problems.push('needs exactly one of token_issuer (for POST /v1/jwt/messages) or aws (for POST /v1/messages)');
    return undefined;
  }
  const auth = hasToken ? tokenAuthOf(raw.token_issuer, problems, opts.allowHttpLoopback) : awsAuthOf(raw.aws, problems, opts.readSecret);
  if (problems.length > 0 || !auth || !name || !workspaceId || !appId || !connectionId) return undefined;
  return { name, workspaceId, appId, connectionId, auth };
}

function tokenAuthOf(raw: unknown, problems: string[], allowHttpLoopback: boolean): ManagedTokenAuth | undefined {
  if (!isObject(raw)) {
    problems.push('token_issuer must be a mapping');
    return undefined;
  }
  unknownKeys(raw, TOKEN_KEYS, 'token_issuer.', problems);
  const issuer = text(raw, 'issuer', /\S/, problems, 'the exact iss of the tokens', 'token_issuer.');
  const jwksUrl = text(raw, 'jwks_url', /\S/, problems, 'the https URL of the key set', 'token_issuer.');
  const audience = text(raw, 'audience', /\S/, problems, 'the aud the tokens carry', 'token_issuer.');
  const clientId = text(raw, 'client_id', /\S/, problems, "the value of the client claim in the app's tokens", 'token_issuer.');
  const clientClaim = raw.client_claim ?? 'azp';
  if (!(CLIENT_CLAIMS as readonly unknown[]).includes(clientClaim)) problems.push(`token_issuer.client_claim must be one of ${CLIENT_CLAIMS.join(', ')}`);
  const algorithms = raw.algorithms ?? DEFAULT_EXTERNAL_ALGORITHMS;
  if (!Array.isArray(algorithms) || !algorithms.every((a) => typeof a === 'string')) problems.push('token_issuer.algorithms must be a list of algorithm names');
  const tolerance = raw.clock_tolerance_seconds ?? DEFAULT_CLOCK_TOLERANCE_SECONDS;
  if (!issuer || !jwksUrl || !audience || !clientId || problems.length > 0) return undefined;
  const settings: ExternalIssuer = {
    issuer,
    jwksUrl,
    audiences: [audience],
    algorithms: algorithms as ExternalAlgorithm[],
    clientClaim: clientClaim as ClientClaim,
    clockToleranceSeconds: tolerance as number,
  };
  const settingProblems = externalIssuerProblems(settings, { allowHttpLoopback });
  problems.push(...settingProblems.map((p) => `token_issuer: ${p}`));
  return settingProblems.length === 0 ? { kind: 'token', issuer: settings, clientId } : undefined;
}

function awsAuthOf(raw: unknown, problems: string[], readSecret: (path: string) => string): ManagedAwsAuth | undefined {
  if (!isObject(raw)) {
    problems.push('aws must be a mapping');
    return undefined;
  }
  unknownKeys(raw, AWS_KEYS, 'aws.', problems);
  const roleArn = text(raw, 'role_arn', ROLE_ARN, problems, 'an IAM role ARN (arn:aws:iam::<account>:role/<name>)', 'aws.');
  const accessKeyId = text(raw, 'access_key_id', ACCESS_KEY_ID, problems, '16 to 128 uppercase letters and digits', 'aws.');
  const secretFile = text(raw, 'secret_access_key_file', /^\//, problems, 'an absolute path (the mounted Secret key)', 'aws.');
  if (!roleArn || !accessKeyId || !secretFile) return undefined;
  let secretAccessKey: string;
  try {
    secretAccessKey = readSecret(secretFile).trim();
  } catch (err) {
    problems.push(`aws.secret_access_key_file ${secretFile} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    return undefined;
  }
  // The secret itself is never quoted, only whether it is usable.
  if (secretAccessKey.length < 16) {
    problems.push(`aws.secret_access_key_file ${secretFile} must hold a secret of at least 16 characters`);
    return undefined;
  }
  return { kind: 'aws', roleArn, accessKeyId, secretAccessKey };
}

function duplicates(apps: readonly ManagedApp[]): string[] {
  const problems: string[] = [];
  const seen = new Map<string, string>();
  const once = (key: string, app: ManagedApp, what: string) => {
    const first = seen.get(key);
    if (first !== undefined) problems.push(`${app.name}: ${what} is used by ${first} already`);
    else seen.set(key, app.name);
  };
  for (const app of apps) {
    once(`name ${app.name}`, app, 'the name');
    if (app.auth.kind === 'token') once(`client ${app.auth.issuer.issuer}\n${app.auth.clientId}`, app, 'the issuer and client_id');
    else once(`key ${app.auth.accessKeyId}`, app, 'the access_key_id');
  }
  return problems;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(raw: Record<string, unknown>, key: string, pattern: RegExp, problems: string[], describe: string, prefix = ''): string | undefined {
  const value = raw[key];
  if (typeof value !== 'string' || !pattern.test(value)) {
    problems.push(`${prefix}${key} must be ${describe}`);
    return undefined;
  }
  return value;
}

function unknownKeys(raw: Record<string, unknown>, known: ReadonlySet<string>, prefix: string, problems: string[]): void {
  for (const key of Object.keys(raw)) if (!known.has(key)) problems.push(`${prefix}${key} is not a known field`);
}

/**
 * The managed apps of MANAGED_APPS_FILE, read and checked at start-up: a problem is a ConfigError
 * naming the variable and the entry (the process exits 2, like any bad variable). Unset: no managed
 * apps; /v1/jwt/messages then refuses every token (401). Checked here rather than by the variable's
 * own reader because a JWKS URL's rule depends on IDENTITY_PROVIDER_ALLOW_HTTP_LOOPBACK.
 */
export function managedAppsOf(config: { MANAGED_APPS_FILE: string | undefined; IDENTITY_PROVIDER_ALLOW_HTTP_LOOPBACK: boolean }): ManagedApp[] {
  const path = config.MANAGED_APPS_FILE;
  if (path === undefined) return [];
  try {
    return parseManagedApps(readFileSync(path, 'utf8'), {
      allowHttpLoopback: config.IDENTITY_PROVIDER_ALLOW_HTTP_LOOPBACK,
      readSecret: (secretPath) => readFileSync(secretPath, 'utf8'),
    });
  } catch (err) {
    const problem = err instanceof ManagedAppsError ? err.message : `${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
    throw new ConfigError([{ variable: 'MANAGED_APPS_FILE', problem }]);
  }
}
