import { SerialWrites } from './serial-writes';

/** A write that says when it started and ends (or fails) when the test says. */
function heldWrite(log: string[], name: string) {
  let started = (): void => undefined;
  const hasStarted = new Promise<void>((resolve) => (started = resolve));
  let settle: { resolve: () => void; reject: (err: Error) => void } | undefined;
  const write = () =>
    new Promise<void>((resolve, reject) => {
      log.push(`${name} started`);
      settle = { resolve, reject };
      started();
    });
  return {
    write,
    hasStarted,
    end: () => (log.push(`${name} ended`), settle?.resolve()),
    fail: () => (log.push(`${name} failed`), settle?.reject(new Error(`${name} failed`))),
  };
}

/** Lets every queued callback run (a write that could start would have started). */
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('SerialWrites', () => {
  it('runs a write asked for meanwhile only after the running one ended, and is idle again after both', async () => {
    const log: string[] = [];
    const writes = new SerialWrites();
    const first = heldWrite(log, 'first');
    const second = heldWrite(log, 'second');
    const firstDone = writes.run(first.write);
    const secondDone = writes.run(second.write);
    await first.hasStarted;
    await settled();
    expect([log, writes.busy]).toEqual([['first started'], true]);
    first.end();
    await firstDone;
    await second.hasStarted;
    second.end();
    await secondDone;
    expect([log, writes.busy]).toEqual([['first started', 'first ended', 'second started', 'second ended'], false]);
  });

  it('goes on with the next write after one failed', async () => {
    const log: string[] = [];
    const writes = new SerialWrites();
    const failing = heldWrite(log, 'failing');
    const after = heldWrite(log, 'after');
    const failed = writes.run(failing.write);
    const next = writes.run(after.write);
    await failing.hasStarted;
    failing.fail();
    await expect(failed).rejects.toThrow('failing failed');
    await after.hasStarted;
    after.end();
    await next;
    expect([log, writes.busy]).toEqual([['failing started', 'failing failed', 'after started', 'after ended'], false]);
  });
});
