import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, databaseConfig, kafkaConfig, loadConfig, processConfig, str, url } from '@bus/config';
import { createDatabase, type Knex } from '@bus/db';
import { createControlPublisher, IdentityAdmin, KnexIdentityStore, busBaseUrlConfig, type IssuedCredential } from '@bus/identity';
import { createKafka, createProducer } from '@bus/kafka';
import { createLogger } from '@bus/observability';
import { MESSAGE_TYPES } from '@bus/som';
import { secretMatches } from '@bus/tokens';

/**
 * `npm run up`'s demo tenant, idempotent: a house organisation, a workspace, an app allowed every
 * message type and one demo system_id, one producer and one consumer connection. The first run prints
 * the credentials once and writes them to BUS_DEMO_ENV_FILE (.local/demo.env); later runs keep the
 * tenant and the file. Only when the file is gone or no longer matches the database (a wiped database,
 * a revoked connection) are new secrets issued, for the same tenant.
 *
 * The organisation and app have fixed ids, by which a rerun finds them. The workspace, the one of the
 * demo organisation, gets a new random id in each database: the workspace id is what Kafka records
 * carry, and buses that share a Kafka (a database wiped under a kept broker, the e2e tests, two
 * checkouts on one broker) must not take each other's demo records for their own.
 */
const DEMO = {
  organisationId: 'odemohouse222',
  appId: 'ademostudio22',
  systemId: 'demo.studio',
} as const;

/**
 * The demo vendor, invited into the demo house: it owns one app in the demo workspace, so the portal's
 * demo vendor (deploy/local/oidc-provider.mjs, docs/portal.md) sees its own app there and not the
 * house's. Its app may publish as its own system_id; it gets no connection (the vendor makes one).
 */
const DEMO_VENDOR = {
  organisationId: 'odemovendor22',
  appId: 'ademovendor22',
  systemId: 'demo.vendor',
  messageTypes: ['telling.started', 'telling.exposed', 'telling.ended'],
} as const;

const VARIABLES = [
  'BUS_BASE_URL',
  'PORTAL_URL',
  'BUS_WORKSPACE_ID',
  'BUS_SYSTEM_ID',
  'BUS_PRODUCER_CLIENT_ID',
  'BUS_PRODUCER_CLIENT_SECRET',
  'BUS_CONSUMER_CLIENT_ID',
  'BUS_CONSUMER_CLIENT_SECRET',
] as const;
type DemoEnv = Record<(typeof VARIABLES)[number], string>;

async function seed(): Promise<void> {
  const config = loadConfig({
    LOG_LEVEL: processConfig.LOG_LEVEL,
    ...databaseConfig,
    ...kafkaConfig,
    ...busBaseUrlConfig,
    PORTAL_URL: url({ protocols: ['http:', 'https:'], default: 'http://127.0.0.1:8090' }),
    BUS_DEMO_ENV_FILE: str({ default: '.local/demo.env' }),
  });
  const logger = createLogger({ service: 'seed', level: config.LOG_LEVEL });
  const file = path.resolve(config.BUS_DEMO_ENV_FILE);
  const db = createDatabase({ url: config.DATABASE_URL, poolMax: 2, applicationName: 'seed', logger });
  const producer = createProducer(createKafka({ brokers: config.KAFKA_BROKERS, clientId: config.KAFKA_CLIENT_ID, logger }));
  try {
    const existing = readDemoEnv(file);
    const valid = existing !== undefined && (await stillValid(db, existing));
    const env = (
      workspaceId: string,
      creds: { producer: { clientId: string; clientSecret: string }; consumer: { clientId: string; clientSecret: string } },
    ): DemoEnv => ({
      BUS_BASE_URL: config.BUS_BASE_URL,
      PORTAL_URL: config.PORTAL_URL,
      BUS_WORKSPACE_ID: workspaceId,
      BUS_SYSTEM_ID: DEMO.systemId,
      BUS_PRODUCER_CLIENT_ID: creds.producer.clientId,
      BUS_PRODUCER_CLIENT_SECRET: creds.producer.clientSecret,
      BUS_CONSUMER_CLIENT_ID: creds.consumer.clientId,
      BUS_CONSUMER_CLIENT_SECRET: creds.consumer.clientSecret,
    });
    const shown = path.relative(process.cwd(), file);
    const admin = IdentityAdmin.create({ db, control: createControlPublisher(producer), logger });
    if (existing && valid) {
      if (existing.BUS_BASE_URL !== config.BUS_BASE_URL || existing.PORTAL_URL !== config.PORTAL_URL) {
        writeDemoEnv(file, { ...existing, BUS_BASE_URL: config.BUS_BASE_URL, PORTAL_URL: config.PORTAL_URL });
      }
      // A newer bus may know more message types: the demo app may publish every one.
      if (!(await permissionsCurrent(db))) {
        await producer.connect();
        await admin.setPermissions(DEMO.appId, { systemIds: [DEMO.systemId], messageTypes: [...MESSAGE_TYPES] });
      }
      // A tenant seeded before the demo vendor existed gets it now.
      if (!(await db('apps').where({ id: DEMO_VENDOR.appId }).first('id'))) {
        await producer.connect();
        await ensureDemoVendor(db, admin, existing.BUS_WORKSPACE_ID);
      }
      process.stdout.write(`demo tenant ${existing.BUS_WORKSPACE_ID} kept; its credentials are in ${shown}\n`);
      return;
    }
    await producer.connect();
    const { workspaceId, credentials } = await issueCredentials(db, admin);
    await ensureDemoVendor(db, admin, workspaceId);
    const fresh = env(workspaceId, { producer: credentials[0], consumer: credentials[1] });
    writeDemoEnv(file, fresh);
    process.stdout.write(
      [
        '',
        `  demo tenant ${workspaceId} (organisation ${DEMO.organisationId}, app ${DEMO.appId}, system_id ${DEMO.systemId})`,
        `    invited vendor ${DEMO_VENDOR.organisationId}, its app ${DEMO_VENDOR.appId} (system_id ${DEMO_VENDOR.systemId}) in the same workspace`,
        `    producer  client_id ${fresh.BUS_PRODUCER_CLIENT_ID}  client_secret ${fresh.BUS_PRODUCER_CLIENT_SECRET}`,
        `    consumer  client_id ${fresh.BUS_CONSUMER_CLIENT_ID}  client_secret ${fresh.BUS_CONSUMER_CLIENT_SECRET}`,
        `  The secrets are shown this once and kept in ${shown}: set -a; . ${shown}; set +a`,
        '',
        '',
      ].join('\n'),
    );
  } finally {
    await producer.disconnect();
    await db.destroy();
  }
}

/** The demo organisation's workspace, when this database has it. */
async function demoWorkspaceId(db: Knex): Promise<string | undefined> {
  const row = await db('workspaces').where({ organisation_id: DEMO.organisationId }).orderBy('created_at').first('id');
  return row?.id;
}

/** Creates what is missing of the demo tenant and issues new secrets for its two connections. */
async function issueCredentials(db: Knex, admin: IdentityAdmin): Promise<{ workspaceId: string; credentials: [IssuedCredential, IssuedCredential] }> {
  if (!(await db('organisations').where({ id: DEMO.organisationId }).first('id'))) {
    await admin.createOrganisation({ id: DEMO.organisationId, name: 'Demo house', kind: 'house' });
  }
  const workspaceId = (await demoWorkspaceId(db)) ?? (await admin.createWorkspace({ organisationId: DEMO.organisationId, name: 'Demo sandbox' }));
  if (!(await db('apps').where({ id: DEMO.appId }).first('id'))) {
    await admin.createApp({ id: DEMO.appId, workspaceId, organisationId: DEMO.organisationId, name: 'Demo studio' });
  }
  await admin.setPermissions(DEMO.appId, { systemIds: [DEMO.systemId], messageTypes: [...MESSAGE_TYPES] });
  const issue = async (kind: 'producer' | 'consumer'): Promise<IssuedCredential> => {
    const active = await db('connections').where({ app_id: DEMO.appId, kind, status: 'active' }).orderBy('created_at').first('id');
    // The same connection gets a new secret (the lost one cannot be recovered); no overlap.
    return active ? admin.rotateCredential(active.id, { overlapSeconds: 0 }) : admin.createConnection({ appId: DEMO.appId, kind });
  };
  return { workspaceId, credentials: [await issue('producer'), await issue('consumer')] };
}

/** The demo vendor organisation and its app in the demo house's workspace, when missing. */
async function ensureDemoVendor(db: Knex, admin: IdentityAdmin, workspaceId: string): Promise<void> {
  if (!(await db('organisations').where({ id: DEMO_VENDOR.organisationId }).first('id'))) {
    await admin.createOrganisation({ id: DEMO_VENDOR.organisationId, name: 'Demo vendor', kind: 'vendor' });
  }
  if (!(await db('apps').where({ id: DEMO_VENDOR.appId }).first('id'))) {
    await admin.createApp({ id: DEMO_VENDOR.appId, workspaceId, organisationId: DEMO_VENDOR.organisationId, name: 'Demo vendor widget' });
    await admin.setPermissions(DEMO_VENDOR.appId, { systemIds: [DEMO_VENDOR.systemId], messageTypes: [...DEMO_VENDOR.messageTypes] });
  }
}

async function permissionsCurrent(db: Knex): Promise<boolean> {
  const rows = await db('permissions').where({ app_id: DEMO.appId }).select('kind', 'value');
  const have = rows.map((r) => `${r.kind}:${r.value}`).sort();
  const want = [`system_id:${DEMO.systemId}`, ...MESSAGE_TYPES.map((t) => `message_type:${t}`)].sort();
  return have.length === want.length && have.every((v, i) => v === want[i]);
}

/** The file's connections are the demo app's, active, and their secrets are current. */
async function stillValid(db: Knex, env: DemoEnv): Promise<boolean> {
  if (env.BUS_WORKSPACE_ID !== (await demoWorkspaceId(db))) return false;
  const store = KnexIdentityStore.create(db);
  for (const [id, secret, kind] of [
    [env.BUS_PRODUCER_CLIENT_ID, env.BUS_PRODUCER_CLIENT_SECRET, 'producer'],
    [env.BUS_CONSUMER_CLIENT_ID, env.BUS_CONSUMER_CLIENT_SECRET, 'consumer'],
  ] as const) {
    const connection = await store.connection(id);
    if (!connection || connection.status !== 'active' || connection.kind !== kind || connection.appId !== DEMO.appId) return false;
    const current = (await store.credentials(id)).find((c) => c.usableUntil === null);
    if (!current || !secretMatches(secret, current.secretHash)) return false;
  }
  return true;
}

function readDemoEnv(file: string): DemoEnv | undefined {
  if (!existsSync(file)) return undefined;
  const values: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) values[m[1] as string] = m[2] as string;
  }
  return VARIABLES.every((v) => typeof values[v] === 'string' && values[v] !== '') ? (values as DemoEnv) : undefined;
}

/** dotenv, readable by `set -a; . file` and dotenv libraries alike; owner-only, written atomically. */
function writeDemoEnv(file: string, env: DemoEnv): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const text = [
    '# The demo tenant of `npm run up` (services/all-in-one/src/seed.ts). Secrets: keep this file private.',
    ...VARIABLES.map((v) => `${v}=${env[v]}`),
    '',
  ].join('\n');
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  renameSync(tmp, file);
}

seed().catch((err: unknown) => {
  process.stderr.write(`seed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(err instanceof ConfigError ? 2 : 1);
});
