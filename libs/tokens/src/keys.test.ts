import { planRotation, POST_RETIRE_MS, PRE_PUBLISH_MS, publishedKeysAt, signingKeyAt, type SigningKeyLifecycle } from './keys';

const DAY = 86_400_000;
const INTERVAL = 30 * DAY;
const t0 = new Date('2026-11-01T00:00:00Z');
const at = (ms: number) => new Date(t0.getTime() + ms);

/** Applies plans as the auth service does, and returns the keys. */
function run(keys: SigningKeyLifecycle[], now: Date): SigningKeyLifecycle[] {
  const plan = planRotation(keys, now, INTERVAL);
  let next = keys.filter((k) => !plan.remove.includes(k.kid));
  if (plan.retire) {
    const { kid, retiresAt, unpublishAt } = plan.retire;
    next = next.map((k) => (k.kid === kid ? { ...k, retiresAt, unpublishAt } : k));
  }
  if (plan.create)
    next.push({ kid: `k${keys.length + 1}@${now.toISOString()}`, createdAt: now, activatesAt: plan.create.activatesAt, retiresAt: null, unpublishAt: null });
  return next;
}

describe('signing-key rotation', () => {
  it('creates a key that signs at once in a new environment', () => {
    const keys = run([], t0);
    expect(keys).toHaveLength(1);
    expect(signingKeyAt(keys, t0)?.kid).toBe(keys[0]?.kid);
  });

  it('publishes the next key PRE_PUBLISH_MS before it signs and keeps the old one while its tokens live', () => {
    let keys = run([], t0);
    const first = keys[0] as SigningKeyLifecycle;
    // Nothing to do until the interval is nearly over.
    expect(run(keys, at(INTERVAL - PRE_PUBLISH_MS - 1))).toEqual(keys);
    const planned = at(INTERVAL - PRE_PUBLISH_MS);
    keys = run(keys, planned);
    expect(keys).toHaveLength(2);
    const second = keys[1] as SigningKeyLifecycle;
    expect(second.activatesAt).toEqual(at(INTERVAL));
    // Published at once, signing only from its activation.
    expect(publishedKeysAt(keys, planned).map((k) => k.kid)).toEqual([first.kid, second.kid]);
    expect(signingKeyAt(keys, at(INTERVAL - 1))?.kid).toBe(first.kid);
    expect(signingKeyAt(keys, at(INTERVAL))?.kid).toBe(second.kid);
    // The old key stays in the key set an hour and more after it stopped signing, then leaves it.
    expect(publishedKeysAt(keys, at(INTERVAL + POST_RETIRE_MS - 1)).map((k) => k.kid)).toEqual([first.kid, second.kid]);
    expect(POST_RETIRE_MS).toBeGreaterThan(3600_000);
    expect(publishedKeysAt(keys, at(INTERVAL + POST_RETIRE_MS)).map((k) => k.kid)).toEqual([second.kid]);
    // Running again changes nothing until then; afterwards the old key is deleted.
    expect(run(keys, at(INTERVAL + 1))).toEqual(keys);
    expect(run(keys, at(INTERVAL + POST_RETIRE_MS)).map((k) => k.kid)).toEqual([second.kid]);
  });

  it('still publishes first and signs later when the service was down past the due time', () => {
    let keys = run([], t0);
    const late = at(INTERVAL + 5 * DAY);
    keys = run(keys, late);
    expect(keys[1]?.activatesAt).toEqual(new Date(late.getTime() + PRE_PUBLISH_MS));
    expect(signingKeyAt(keys, late)?.kid).toBe(keys[0]?.kid);
  });
});
