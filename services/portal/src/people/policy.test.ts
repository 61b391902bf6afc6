import { ACTIONS, allows, grantsOfClaim, organisationsOf, type Action, type Grant } from './policy';

const HOUSE = 'ohouse2222222';
const OTHER_HOUSE = 'ootherhouse22';
const VENDOR = 'ovendor222222';
const OTHER_VENDOR = 'ovendor333333';

const WRITES: readonly Action[] = [
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
];
const APP_SCOPED: readonly Action[] = ['app.read', 'connection.read', ...WRITES];

/** Every target kind a portal route asks about. */
const TARGETS = {
  'house itself': { organisationId: HOUSE },
  "house's own app": { organisationId: HOUSE, ownerId: HOUSE },
  "vendor's app in the house": { organisationId: HOUSE, ownerId: VENDOR },
  "other vendor's app in the house": { organisationId: HOUSE, ownerId: OTHER_VENDOR },
  'the vendor itself': { organisationId: VENDOR },
  "other house's app": { organisationId: OTHER_HOUSE, ownerId: OTHER_HOUSE },
  "vendor's app in another house": { organisationId: OTHER_HOUSE, ownerId: VENDOR },
} as const;
type TargetName = keyof typeof TARGETS;

/** The expected answer of every role × action × target, written out rather than derived. */
function expected(role: Grant['role'], action: Action, target: TargetName): boolean {
  switch (role) {
    case 'operator':
      return true;
    case 'house_admin':
      return ['house itself', "house's own app", "vendor's app in the house", "other vendor's app in the house"].includes(target);
    case 'viewer':
      return (
        !WRITES.includes(action) &&
        action !== 'app.permissions' &&
        action !== 'audit.read' &&
        action !== 'connection.dead_letters' &&
        action !== 'connection.purge' &&
        ['house itself', "house's own app", "vendor's app in the house", "other vendor's app in the house"].includes(target)
      );
    case 'vendor':
      if (action === 'organisation.read') return target === 'the vendor itself';
      return APP_SCOPED.includes(action) && ["vendor's app in the house", "vendor's app in another house"].includes(target);
  }
}

const GRANTS: Record<Grant['role'], Grant> = {
  operator: { role: 'operator' },
  house_admin: { role: 'house_admin', organisationId: HOUSE },
  viewer: { role: 'viewer', organisationId: HOUSE },
  vendor: { role: 'vendor', organisationId: VENDOR },
};

describe('allows (role × action × organisation)', () => {
  const cases = Object.values(GRANTS).flatMap((grant) =>
    ACTIONS.flatMap((action) => (Object.keys(TARGETS) as TargetName[]).map((target) => [grant.role, action, target] as const)),
  );
  it.each(cases)('%s may %s on %s as the table says', (role, action, target) => {
    expect(allows([GRANTS[role]], action, TARGETS[target])).toBe(expected(role, action, target));
  });

  it('refuses everything to a person without grants', () => {
    for (const action of ACTIONS) for (const target of Object.values(TARGETS)) expect(allows([], action, target)).toBe(false);
  });

  it('lets any one of several grants decide', () => {
    const grants: Grant[] = [
      { role: 'viewer', organisationId: HOUSE },
      { role: 'house_admin', organisationId: OTHER_HOUSE },
    ];
    expect(allows(grants, 'connection.create', TARGETS["house's own app"])).toBe(false);
    expect(allows(grants, 'connection.create', TARGETS["other house's app"])).toBe(true);
  });

  it("lets a house admin replay its vendor's consumer and a vendor its own, never a viewer", () => {
    expect(allows([GRANTS.house_admin], 'connection.replay', TARGETS["vendor's app in the house"])).toBe(true);
    expect(allows([GRANTS.vendor], 'connection.replay', TARGETS["vendor's app in the house"])).toBe(true);
    expect(allows([GRANTS.vendor], 'connection.replay', TARGETS["other vendor's app in the house"])).toBe(false);
    expect(allows([GRANTS.viewer], 'connection.replay', TARGETS["house's own app"])).toBe(false);
    expect(allows([GRANTS.vendor], 'connection.publish', TARGETS["vendor's app in the house"])).toBe(true);
    expect(allows([GRANTS.vendor], 'connection.publish', TARGETS["house's own app"])).toBe(false);
    expect(allows([GRANTS.viewer], 'connection.publish', TARGETS["house's own app"])).toBe(false);
  });

  it("lets the operator and the house's admin redrive or discard a dead letter, neither a vendor on its own app nor a viewer", () => {
    expect(allows([GRANTS.operator], 'connection.dead_letters', TARGETS["vendor's app in the house"])).toBe(true);
    expect(allows([GRANTS.house_admin], 'connection.dead_letters', TARGETS["vendor's app in the house"])).toBe(true);
    expect(allows([GRANTS.vendor], 'connection.dead_letters', TARGETS["vendor's app in the house"])).toBe(false);
    expect(allows([GRANTS.viewer], 'connection.dead_letters', TARGETS["house's own app"])).toBe(false);
  });

  it("lets the operator and the house's admin purge a consumer's queue, as they resolve dead letters: neither a vendor on its own app nor a viewer", () => {
    expect(allows([GRANTS.operator], 'connection.purge', TARGETS["vendor's app in the house"])).toBe(true);
    expect(allows([GRANTS.house_admin], 'connection.purge', TARGETS["vendor's app in the house"])).toBe(true);
    expect(allows([GRANTS.vendor], 'connection.purge', TARGETS["vendor's app in the house"])).toBe(false);
    expect(allows([GRANTS.viewer], 'connection.purge', TARGETS["house's own app"])).toBe(false);
  });

  it("lets the house's people trace a message of its workspaces, but not a vendor (a trace lists every consumer of the workspace)", () => {
    expect(allows([GRANTS.house_admin], 'message.trace', TARGETS['house itself'])).toBe(true);
    expect(allows([GRANTS.viewer], 'message.trace', TARGETS['house itself'])).toBe(true);
    expect(allows([GRANTS.vendor], 'message.trace', TARGETS['house itself'])).toBe(false);
    expect(allows([GRANTS.house_admin], 'message.trace', { organisationId: OTHER_HOUSE })).toBe(false);
  });

  it('refuses the vendor its app actions when the target names no owner (a workspace-level target)', () => {
    for (const action of APP_SCOPED) expect(allows([GRANTS.vendor], action, { organisationId: HOUSE })).toBe(false);
  });
});

describe("a connection's principals, bindings and registrations", () => {
  const CONNECTION_CHANGES: readonly Action[] = ['connection.principals', 'connection.bindings', 'connection.registrations'];
  it.each(CONNECTION_CHANGES)('%s: the house admin and the operator on any app of the house, the vendor on its own app only, never a viewer', (action) => {
    expect(allows([GRANTS.house_admin], action, TARGETS["vendor's app in the house"])).toBe(true);
    expect(allows([GRANTS.operator], action, TARGETS["other house's app"])).toBe(true);
    expect(allows([GRANTS.vendor], action, TARGETS["vendor's app in the house"])).toBe(true);
    expect(allows([GRANTS.vendor], action, TARGETS["house's own app"])).toBe(false);
    expect(allows([GRANTS.house_admin], action, TARGETS["other house's app"])).toBe(false);
    expect(allows([GRANTS.viewer], action, TARGETS["house's own app"])).toBe(false);
    // Reading them is reading the connection, which the viewer may.
    expect(allows([GRANTS.viewer], 'connection.read', TARGETS["house's own app"])).toBe(true);
  });
});

describe('grantsOfClaim', () => {
  it('reads a list, and a string separated by spaces or commas', () => {
    const expectedGrants = [{ role: 'operator' }, { role: 'house_admin', organisationId: HOUSE }, { role: 'vendor', organisationId: VENDOR }];
    expect(grantsOfClaim(['operator', `house_admin:${HOUSE}`, `vendor:${VENDOR}`])).toEqual(expectedGrants);
    expect(grantsOfClaim(`operator house_admin:${HOUSE},vendor:${VENDOR}`)).toEqual(expectedGrants);
  });

  it('ignores unknown roles, malformed organisation ids and values that are not strings', () => {
    expect(grantsOfClaim(['admin', `owner:${HOUSE}`, 'viewer:not-an-id', 'viewer:', 42, null, { role: 'operator' }])).toEqual([]);
    expect(grantsOfClaim(undefined)).toEqual([]);
    expect(grantsOfClaim({ operator: true })).toEqual([]);
  });

  it('makes one grant of an entry given twice', () => {
    expect(grantsOfClaim(['operator', `viewer:${HOUSE}`, 'operator', `viewer:${HOUSE}`, `vendor:${HOUSE}`])).toEqual([
      { role: 'operator' },
      { role: 'viewer', organisationId: HOUSE },
      { role: 'vendor', organisationId: HOUSE },
    ]);
  });
});

describe('organisationsOf', () => {
  it('names every organisation of the grants once, and says when the operator sees all', () => {
    expect(organisationsOf([GRANTS.viewer, GRANTS.house_admin, GRANTS.vendor])).toEqual({ all: false, ids: [HOUSE, VENDOR] });
    expect(organisationsOf([GRANTS.operator]).all).toBe(true);
  });
});
