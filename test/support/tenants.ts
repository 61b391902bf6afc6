import pino from 'pino';
import { createDatabase, type Knex } from '@bus/db';
import { createControlPublisher, IdentityAdmin } from '@bus/identity';
import { createKafka, createProducer, type Producer } from '@bus/kafka';
import type { RunningBus } from './bus';
import { deliveryCaughtUp } from './delivery';

type BusAddress = Pick<RunningBus, 'busUrl' | 'env'>;

export interface Tenant {
  organisationId: string;
  workspaceId: string;
  appId: string;
  producer: { clientId: string; clientSecret: string };
  consumer: { clientId: string; clientSecret: string };
}

/**
 * Provisions tenants in a running bus's database the way the portal will (libs/identity's
 * IdentityAdmin, announcing changes on the control topic), for tests that need several tenants.
 */
export class TenantFixture {
  private constructor(
    readonly db: Knex,
    readonly admin: IdentityAdmin,
    private readonly producer: Producer,
    private readonly bus: BusAddress,
  ) {}

  /** `bus`: where tokens are issued (auth, or the all-in-one) and the environment its processes run with. */
  static async create(bus: BusAddress): Promise<TenantFixture> {
    const logger = pino({ level: 'warn' });
    const db = createDatabase({ url: bus.env.DATABASE_URL as string, poolMax: 2, applicationName: 'test-tenants' });
    const producer = createProducer(createKafka({ brokers: (bus.env.KAFKA_BROKERS as string).split(','), clientId: 'test-tenants', logger }));
    await producer.connect();
    return new TenantFixture(db, IdentityAdmin.create({ db, control: createControlPublisher(producer), logger }), producer, bus);
  }

  /** A house organisation with one workspace and one app holding a producer and a consumer. */
  async tenant(permissions: { systemIds: string[]; messageTypes: string[] }): Promise<Tenant> {
    const organisationId = await this.admin.createOrganisation({ name: 'Test house', kind: 'house' });
    const workspaceId = await this.admin.createWorkspace({ organisationId, name: 'Test workspace' });
    const appId = await this.admin.createApp({ workspaceId, organisationId, name: 'Test app' });
    await this.admin.setPermissions(appId, permissions);
    const producer = await this.admin.createConnection({ appId, kind: 'producer' });
    const consumer = await this.admin.createConnection({ appId, kind: 'consumer' });
    return { organisationId, workspaceId, appId, producer, consumer };
  }

  /** An access token from the bus's token route (client credentials, HTTP Basic). */
  async token(client: { clientId: string; clientSecret: string }): Promise<string> {
    const basic = Buffer.from(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`).toString('base64');
    const res = await fetch(`${this.bus.busUrl}/v1/oauth/token`, {
      method: 'POST',
      headers: { Authorization: `Basic ${basic}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    if (res.status !== 200) throw new Error(`token route answered ${res.status}: ${await res.text()}`);
    return ((await res.json()) as { access_token: string }).access_token;
  }

  async close(): Promise<void> {
    await this.producer.disconnect();
    await this.db.destroy();
  }
}

/**
 * Two workspaces whose apps may publish `permissions` on a running bus whose delivery has caught up:
 * the one under test and another, whose tokens a test's refusals use.
 */
export async function houseAndOther(
  bus: RunningBus,
  permissions: { systemIds: string[]; messageTypes: string[] },
): Promise<{ tenants: TenantFixture; house: Tenant; other: Tenant }> {
  await deliveryCaughtUp(bus);
  const tenants = await TenantFixture.create(bus);
  return { tenants, house: await tenants.tenant(permissions), other: await tenants.tenant(permissions) };
}
