/**
 * Who may do what in the portal for people (docs/portal.md): one pure decision used by every
 * portal /api/* route and page. A person's grants come from the identity provider's access claim at
 * sign-in; a target names the house whose workspace it lives in and, for apps and connections, the
 * organisation that owns the app (the house itself or an invited vendor).
 */

export const ROLES = ['operator', 'house_admin', 'vendor', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/** One role, in one organisation (the operator's role spans every organisation). */
export type Grant = { role: 'operator' } | { role: Exclude<Role, 'operator'>; organisationId: string };

export const ACTIONS = [
  'organisation.read',
  'workspace.read',
  'app.read',
  'connection.read',
  'connection.create',
  /** Rename a connection or change its description. */
  'connection.describe',
  'connection.rotate',
  'connection.revoke',
  /** Remove a connection for good: its credentials are deleted, its id stays taken. */
  'connection.remove',
  /** What an app may publish: the house decides, for its own apps and its vendors' alike. */
  'app.permissions',
  'audit.read',
  /** A connection's AWS principals: register, challenge, revoke, remove (connection-pages.tsx). */
  'connection.principals',
  /** A connection's bindings to an identity provider the operator registered (the providers stay the operator's). */
  'connection.bindings',
  /** A consumer connection's skill registrations: add and remove (connection-pages.tsx). */
  'connection.registrations',
  /** Replay a consumer connection from the archive (its queue stats and replays' progress are connection.read). */
  'connection.replay',
  /**
   * Redrive or discard a consumer connection's dead letter: the house's call (operator, house admin),
   * not its vendor's; listing them is connection.read.
   */
  'connection.dead_letters',
  /** Purge a consumer connection's queue (its dead letters stay): the house's call, as resolving a dead letter is. */
  'connection.purge',
  /** Publish through a producer connection from its page (a test message, the simulated producer): the app's owner may. */
  'connection.publish',
  /** Trace any accepted message of a workspace: it lists every consumer connection of the workspace. */
  'message.trace',
] as const;
export type Action = (typeof ACTIONS)[number];

/** What an action is about: the organisation it concerns and, inside a house's workspace, the app's owner. */
export interface Target {
  /** The organisation itself (organisation.read, audit.read) or the house of the workspace. */
  organisationId: string;
  /** The organisation that owns the app (apps and connections only). */
  ownerId?: string;
}

const READS: ReadonlySet<Action> = new Set(['organisation.read', 'workspace.read', 'app.read', 'connection.read', 'message.trace']);
const APP_ACTIONS: ReadonlySet<Action> = new Set([
  'app.read',
  'connection.read',
  'connection.create',
  'connection.describe',
  'connection.rotate',
  'connection.revoke',
  'connection.remove',
  'connection.principals',
  'connection.bindings',
  'connection.registrations',
  'connection.replay',
  'connection.publish',
]);

/** Whether any of the grants allows the action on the target. */
export function allows(grants: readonly Grant[], action: Action, target: Target): boolean {
  return grants.some((grant) => grantAllows(grant, action, target));
}

function grantAllows(grant: Grant, action: Action, target: Target): boolean {
  switch (grant.role) {
    case 'operator':
      return true;
    case 'house_admin':
      // Everything inside its own organisation's workspaces, including the apps of vendors it invited.
      return target.organisationId === grant.organisationId;
    case 'viewer':
      return READS.has(action) && target.organisationId === grant.organisationId;
    case 'vendor':
      // Its own organisation, and its own apps inside the houses that invited it: nothing of the house's
      // or of another vendor's.
      if (action === 'organisation.read') return target.organisationId === grant.organisationId;
      return APP_ACTIONS.has(action) && target.ownerId === grant.organisationId;
  }
}

/** Whether a grant gives a role in (or over) the organisation: what lists show a person. */
export function organisationsOf(grants: readonly Grant[]): { all: boolean; ids: string[] } {
  const ids = grants.flatMap((g) => (g.role === 'operator' ? [] : [g.organisationId]));
  return { all: grants.some((g) => g.role === 'operator'), ids: [...new Set(ids)] };
}

/**
 * The grants in an access claim: a list of strings (or one string of them separated by spaces or
 * commas, as some providers send groups): `operator`, or `<role>:<organisation id>` with role
 * house_admin, vendor or viewer. Anything else is ignored, so unrelated groups in the same claim
 * give nothing; an entry given twice is one grant.
 */
export function grantsOfClaim(claim: unknown): Grant[] {
  const entries = typeof claim === 'string' ? claim.split(/[\s,]+/) : Array.isArray(claim) ? claim.filter((e): e is string => typeof e === 'string') : [];
  const grants = new Map<string, Grant>();
  for (const entry of entries) {
    if (grants.has(entry)) continue;
    if (entry === 'operator') {
      grants.set(entry, { role: 'operator' });
      continue;
    }
    const match = /^(house_admin|vendor|viewer):(o[a-z2-7]{12})$/.exec(entry);
    if (match) grants.set(entry, { role: match[1] as Exclude<Role, 'operator'>, organisationId: match[2]! });
  }
  return [...grants.values()];
}
