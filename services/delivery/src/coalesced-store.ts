import { coalesceCalls } from '@bus/contracts';
import { acceptanceKey, type Acceptance, type DeliveryStore } from '@bus/queue';
import type { EnqueueStore } from './enqueue';

type MessageKeys = Parameters<DeliveryStore['acceptances']>[0];
type BatchWrite = Parameters<DeliveryStore['write']>[0];

/**
 * The enqueue store of partitions handled side by side, with their statements coalesced: delivery's
 * Kafka fetch hands over every partition's records together, and each partition's slice made its own
 * acceptance query and its own enqueue statement. Calls arriving while one of their kind runs wait for
 * it and then go as one (coalesceCalls: at most `maxTogether`, a lone call at once): one query for all
 * their acceptances, one statement (or transaction) for all their writes. Each caller still gets only
 * its own answer; a failure is each waiting caller's failure, so each partition's records are replayed
 * as when its own statement failed.
 */
export function coalescedEnqueueStore(store: DeliveryStore, maxTogether: number): EnqueueStore {
  const acceptances = coalesceCalls<MessageKeys, Map<string, Acceptance>>(
    () => 'acceptances',
    async (calls) => {
      const found = await store.acceptances(calls.flat());
      return calls.map((keys) => {
        const own = new Map<string, Acceptance>();
        for (const key of keys.map(acceptanceKey)) {
          const acceptance = found.get(key);
          if (acceptance !== undefined) own.set(key, acceptance);
        }
        return own;
      });
    },
    maxTogether,
  );
  const write = coalesceCalls<BatchWrite, number>(
    () => 'write',
    (batches) => store.writeAll(batches),
    maxTogether,
  );
  return {
    existingWorkspaces: (workspaceIds) => store.existingWorkspaces(workspaceIds),
    acceptances,
    write,
  };
}
