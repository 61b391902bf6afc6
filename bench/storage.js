// Storage cost per message (`npm run bench:storage`; needs the local stack: deploy/local/stack.sh up).
// Not a test: the figure depends on the machine and Postgres, so nothing here passes or fails, and it
// stops by itself (every loop is bounded in count and time; loopback only).
//
// Starts the real all-in-one process on a database of its own, provisions one workspace (one producer,
// one consumer), then publishes WARM_UP messages (about 2 KB, story.context, spread over 64 correlation
// ids), receives and acks them all, and measures the Postgres size of every table the retention sweep
// bounds (pg_total_relation_size: heap, TOAST and indexes). It then does the same for BENCH_MESSAGES
// more and prints the growth per 1,000 messages, per table and in all. The warm-up takes the
// one-time costs (first pages, index roots) out of the figure. At steady state each table holds its
// window's worth of messages (docs/operations.md, "Retention"), so Postgres's size is this figure times
// the messages of the longest window.
'use strict';

const { RETENTION_TABLES } = require('@bus/queue');
const { machine, provisionWorkspace, startBus, storyMessage } = require('./support');

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 2000);
const WARM_UP = 500;
const CONCURRENCY = 8;
const CORRELATION_IDS = 64;
const DEADLINE_MS = 300_000;

async function main() {
  const started = Date.now();
  const bus = await startBus('bench-storage');
  try {
    const ws = await provisionWorkspace(bus, { systemId: 'storyteller.web', messageTypes: ['story.context'], producers: 1, consumers: 1 });
    const [producer] = ws.producers;
    const [consumer] = ws.consumers;
    const sizes = async () => {
      await bus.db.raw('ANALYZE');
      const out = {};
      for (const { table } of RETENTION_TABLES) {
        out[table] = Number((await bus.db.raw('SELECT pg_total_relation_size(?::regclass) AS bytes', [table])).rows[0].bytes);
      }
      return out;
    };
    const round = async (count) => {
      const ids = new Set();
      let next = 0;
      const publishOne = async () => {
        while (next < count && Date.now() - started < DEADLINE_MS) {
          const { messageId, body } = storyMessage(`c-bench-${next++ % CORRELATION_IDS}`);
          const res = await fetch(`${bus.busUrl}/v1/tenants/${ws.workspace}/messages`, {
            method: 'POST',
            headers: { Authorization: `Bearer ${producer.token}`, 'Content-Type': 'application/json' },
            body,
          });
          if (res.status !== 202) throw new Error(`publish answered ${res.status}: ${await res.text()}`);
          ids.add(messageId);
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, publishOne));
      const path = `${bus.busUrl}/v1/tenants/${ws.workspace}/consumers/${consumer.clientId}`;
      const auth = { Authorization: `Bearer ${consumer.token}` };
      const received = new Set();
      while (received.size < ids.size && Date.now() - started < DEADLINE_MS) {
        const res = await fetch(`${path}/messages?max_messages=10&wait_seconds=2`, { headers: auth });
        const { messages } = await res.json();
        for (const m of messages) received.add(m.message_id);
        if (messages.length > 0) {
          await fetch(`${path}/ack`, {
            method: 'POST',
            headers: { ...auth, 'Content-Type': 'application/json' },
            body: JSON.stringify({ receipt_handles: messages.map((m) => m.receipt_handle) }),
          });
        }
      }
      if (received.size < ids.size) throw new Error(`only ${received.size} of ${ids.size} messages received before the deadline`);
      return ids.size;
    };

    await round(WARM_UP);
    const before = await sizes();
    const measured = await round(MESSAGES);
    const after = await sizes();

    const perThousand = (table) => ((after[table] - before[table]) / measured) * 1000;
    const total = RETENTION_TABLES.reduce((n, { table }) => n + perThousand(table), 0);
    console.log(`bench:storage — ${machine()}`);
    console.log(`${measured} messages of ~2 KB (story.context) published, received and acked by one consumer, after ${WARM_UP} to warm up`);
    console.log('table                  bytes per 1,000 messages');
    for (const { table } of RETENTION_TABLES) console.log(`${table.padEnd(22)} ${Math.round(perThousand(table)).toLocaleString('en')}`);
    console.log(`${'all'.padEnd(22)} ${Math.round(total).toLocaleString('en')} (${(total / 2 ** 20).toFixed(2)} MiB)`);
  } finally {
    await bus.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
