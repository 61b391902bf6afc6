import { isRuleId, RULES, rulesCatalogue, splitTolerated, violation } from './rules';

describe('RULES', () => {
  const entries = Object.entries(RULES);

  it('names every rule as <area>.<name> in lowercase', () => {
    for (const [rule] of entries) expect(rule).toMatch(/^[a-z]+(\.[a-z_]+)+$/);
  });

  it('gives tolerated rules status 202 and refusing rules an error status', () => {
    for (const [, { tolerated, status }] of entries) expect(tolerated ? status === 202 : status >= 400).toBe(true);
  });

  it('ties the SOM rules to their source and status', () => {
    for (const [rule, { source, status, tolerated }] of entries) {
      const area = rule.split('.')[0];
      if (area === 'schema') expect([source, status]).toEqual(['schema', 400]);
      if (area === 'conformance') expect([source, tolerated ? 202 : 400]).toEqual(['conformance', status]);
      if (area === 'sequence') expect([source, status]).toEqual(['sequence', 409]);
      if (area === 'policy') expect([source, status]).toEqual(['policy', 403]);
    }
  });

  it('tolerates only a skewed clock and a gate change that changes nothing', () => {
    expect(entries.filter(([, { tolerated }]) => tolerated).map(([rule]) => rule)).toEqual(['conformance.occurred_at_future', 'conformance.gate_unchanged']);
  });

  it('carries the request-level rules of the gateway with their statuses (docs/api.md#errors, @bus/http)', () => {
    const requestLevel = Object.fromEntries(
      [
        'producer.unauthenticated',
        'producer.not_registered',
        'tenant.mismatch',
        'request.blocked',
        'idempotency.message_id_reused',
        'message.too_large',
        'rate.limited',
        'quota.exceeded',
        'registry.unavailable',
        'route.not_found',
        'method.not_allowed',
        'request.malformed',
        'request.headers_too_large',
        'request.timeout',
        'internal.error',
      ].map((rule) => [rule, isRuleId(rule) ? [RULES[rule].source, RULES[rule].status] : 'missing']),
    );
    expect(requestLevel).toEqual({
      'producer.unauthenticated': ['policy', 401],
      'producer.not_registered': ['policy', 403],
      'tenant.mismatch': ['policy', 403],
      'request.blocked': ['policy', 403],
      'idempotency.message_id_reused': ['policy', 409],
      'message.too_large': ['conformance', 413],
      'rate.limited': ['policy', 429],
      'quota.exceeded': ['policy', 429],
      'registry.unavailable': ['policy', 503],
      'route.not_found': ['policy', 404],
      'method.not_allowed': ['policy', 405],
      'request.malformed': ['policy', 400],
      'request.headers_too_large': ['policy', 431],
      'request.timeout': ['policy', 408],
      'internal.error': ['policy', 500],
    });
  });
});

describe('isRuleId', () => {
  it('knows catalogued rules only, not Object.prototype members', () => {
    expect(isRuleId('schema.required')).toBe(true);
    expect(isRuleId('schema.nonsense')).toBe(false);
    expect(isRuleId('constructor')).toBe(false);
  });
});

describe('violation', () => {
  it('takes the source from the catalogue and leaves out an unknown path', () => {
    expect(violation('sequence.telling.ended', 'm')).toEqual({ source: 'sequence', rule: 'sequence.telling.ended', message: 'm' });
    expect(Object.keys(violation('schema.required', 'm'))).not.toContain('path');
    expect(violation('schema.required', 'm', '/payload/x')).toEqual({ source: 'schema', rule: 'schema.required', message: 'm', path: '/payload/x' });
  });
});

describe('splitTolerated', () => {
  it('splits by the catalogue and refuses on rules it does not know', () => {
    const skewed = violation('conformance.occurred_at_future', 'skewed', '/occurred_at');
    const missing = violation('schema.required', 'missing', '/payload/x');
    const unknown = { source: 'schema' as const, rule: 'schema.from_elsewhere', message: 'x' };
    expect(splitTolerated([skewed, missing, unknown])).toEqual({ refusing: [missing, unknown], tolerated: [skewed] });
  });
});

describe('rulesCatalogue', () => {
  it('lists every rule once, ordered by id, with the SOM version', () => {
    const catalogue = rulesCatalogue();
    expect(catalogue.som_version).toBe('1.0.0');
    expect(catalogue.rules.map((entry) => entry.rule)).toEqual(Object.keys(RULES).sort());
    expect(catalogue.rules.find((entry) => entry.rule === 'schema.required')).toEqual({ rule: 'schema.required', ...RULES['schema.required'] });
  });

  it('is plain JSON', () => {
    expect(JSON.parse(JSON.stringify(rulesCatalogue()))).toEqual(rulesCatalogue());
  });
});
