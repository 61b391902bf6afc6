import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Logger } from '@bus/observability';
import { eventually } from '@bus/testing';
import { adminAudit } from './admin-audit';
import type { AuditedCollection, PeopleStore } from './people';

type AuditEntry = Parameters<PeopleStore['audit']>[0];

/**
 * A binding store in memory whose organisation lookup answers a turn of the event loop later, as
 * a query on the pool does: the removal's audit entry must still name the organisation.
 */
function bindingsOfOneOrganisation() {
  const organisationOfBinding = new Map([['bwoe4pngzw3in', 'oecelfp5u6jed']]);
  const entries: AuditEntry[] = [];
  const people = {
    organisationOfTarget: (_collection: AuditedCollection, id: string) =>
      new Promise<string | null>((resolve) => setImmediate(() => resolve(organisationOfBinding.get(id) ?? null))),
    audit: async (entry: AuditEntry) => {
      entries.push(entry);
    },
  } as unknown as PeopleStore;
  return { organisationOfBinding, entries, people };
}

const silent = { error: jest.fn() } as unknown as Logger;

/** Runs `run` against `app` listening on a loopback port of its own, then closes it. */
async function whileListening(app: express.Express, run: (base: string) => Promise<void>): Promise<void> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('the admin audit entry', () => {
  it('of a removal names the organisation the removed row belonged to, however fast the removal runs', async () => {
    const { organisationOfBinding, entries, people } = bindingsOfOneOrganisation();
    const app = express();
    app.use(adminAudit(people, 'operator', silent));
    app.delete('/api/admin/identity-providers/:provider/bindings/:binding', (req, res) => {
      organisationOfBinding.delete(req.params.binding);
      res.status(204).end();
    });

    await whileListening(app, async (base) => {
      const res = await fetch(`${base}/api/admin/identity-providers/il7lyhk3ft47q/bindings/bwoe4pngzw3in`, { method: 'DELETE' });
      expect(res.status).toBe(204);
    });

    expect(organisationOfBinding.size).toBe(0);
    await eventually(
      () => entries.length,
      (written) => written === 1,
      { what: 'the audit entry written' },
    );
    expect(entries).toEqual([
      expect.objectContaining({
        action: 'DELETE /api/admin/identity-providers/il7lyhk3ft47q/bindings/bwoe4pngzw3in',
        organisationId: 'oecelfp5u6jed',
        status: 204,
      }),
    ]);
  });
});
