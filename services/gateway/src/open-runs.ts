import { readOpenRuns, type Knex } from '@bus/db';

/**
 * Whether a workspace has a test run open (docs/testing-tools.md#test-runs), asked by the refusal
 * recorder for each accepted validate. The answer is kept `ttlMs` per workspace, so validating costs
 * Postgres at most one indexed read per workspace and period, and none on the request's path (the
 * recorder asks after the answer went out). A run opened on another gateway is seen within `ttlMs`;
 * this gateway's own run routes forget the workspace's answer at once.
 */
export interface OpenRuns {
  openAt(workspaceId: string, at: Date): Promise<boolean>;
  forget(workspaceId: string): void;
}

/** Workspaces whose answer is kept at once; past it the cache starts over (a read per workspace again). */
const WORKSPACES_KEPT = 10_000;

export function openRunsOf(db: Knex, ttlMs = 1_000, now: () => number = Date.now): OpenRuns {
  const kept = new Map<string, { until: number; ends: Promise<Date[]> }>();
  return {
    async openAt(workspaceId, at) {
      let entry = kept.get(workspaceId);
      if (!entry || entry.until <= now()) {
        if (kept.size >= WORKSPACES_KEPT) kept.clear();
        const ends = readOpenRuns(db, workspaceId).then((runs) => runs.map((r) => r.endsAt));
        entry = { until: now() + ttlMs, ends };
        kept.set(workspaceId, entry);
        // A failed read is not kept: the next validate asks again.
        ends.catch(() => kept.get(workspaceId) === entry && kept.delete(workspaceId));
      }
      return (await entry.ends).some((end) => end > at);
    },
    forget(workspaceId) {
      kept.delete(workspaceId);
    },
  };
}
