// Every bus process reads the control topic through a consumer group of its own
// (`identity.<component>.<host>.<pid>.<random>`, libs/identity control.ts): a clean stop deletes it,
// so stopped processes (tests, benches, rolling deploys) leave no groups behind on the brokers.
import { hostname } from 'node:os';
import pino from 'pino';
import { createKafka } from '@bus/kafka';
import { startBus, type RunningBus } from './support/bus';

let bus: RunningBus | undefined;
afterAll(async () => {
  await bus?.stop();
}, 30_000);

it('a clean stop of the bus deletes its control-topic consumer groups', async () => {
  bus = await startBus();
  const pid = bus.process.child.pid;
  const own = (groupId: string) => groupId.startsWith('identity.') && groupId.includes(`.${hostname()}.${pid}.`);
  const admin = createKafka({ brokers: bus.env.KAFKA_BROKERS!.split(','), clientId: 'test-consumer-groups', logger: pino({ level: 'warn' }) }).admin();
  await admin.connect();
  try {
    const before = (await admin.listGroups()).groups.map((g) => g.groupId).filter(own);
    expect(before.length).toBeGreaterThan(0);
    const running = bus;
    bus = undefined;
    await running.stop();
    expect((await admin.listGroups()).groups.map((g) => g.groupId).filter(own)).toEqual([]);
  } finally {
    await admin.disconnect();
  }
}, 90_000);
