import { checkPolicy } from './policy';
import { exampleMessage } from './testing';

const message = exampleMessage('telling.started');
const allowed = { systemIds: ['storyteller.web', 'storyteller.app'], messageTypes: ['telling.started', 'telling.ended'] };

describe('checkPolicy', () => {
  it('passes a system_id and a message_type the app may publish', () => {
    expect(checkPolicy(message, allowed)).toEqual([]);
  });

  it('policy.system_id_not_allowed: refuses a system_id the app may not publish for', () => {
    expect(checkPolicy(message, { ...allowed, systemIds: ['storyteller.app'] })).toEqual([
      { source: 'policy', rule: 'policy.system_id_not_allowed', message: expect.stringContaining('storyteller.web'), path: '/system_id' },
    ]);
  });

  it('policy.message_type_not_allowed: refuses a message_type the app may not publish', () => {
    expect(checkPolicy(message, { ...allowed, messageTypes: ['telling.ended'] })).toEqual([
      { source: 'policy', rule: 'policy.message_type_not_allowed', message: expect.stringContaining('telling.started'), path: '/message_type' },
    ]);
  });

  it('reports both at once, and an app with no permissions may publish nothing', () => {
    expect(checkPolicy(message, { systemIds: [], messageTypes: [] }).map((found) => found.rule)).toEqual([
      'policy.system_id_not_allowed',
      'policy.message_type_not_allowed',
    ]);
  });
});
