import type { App, Connection, IssuedCredential, MessageTrace, Organisation, QueueStats, Registration, Replay } from './api';
import {
  appView,
  connectionView,
  consumerToolsFields,
  fields,
  formatQuota,
  listTable,
  organisationView,
  permissionFields,
  queueFields,
  queuePurgedFields,
  registrationColumns,
  renderDeadLetters,
  renderIssued,
  renderTrace,
  replayFields,
  table,
} from './render';

const org = (id: string, name: string): Organisation => ({
  id,
  name,
  kind: 'house',
  quota: { tier: 'standard', per_second: 20, burst: 40, per_day: 100_000 },
  created_at: '2026-11-22T05:00:00.000Z',
});

const connection: Connection = {
  client_id: 'cabcdefghijkl',
  app_id: 'aabcdefghijkl',
  workspace_id: 'wabcdefghijkl',
  organisation_id: 'oabcdefghijkl',
  kind: 'producer',
  status: 'active',
  name: 'Story publisher',
  description: '',
  credential_version: 2,
  created_at: '2026-11-22T05:00:00.000Z',
  status_changed_at: null,
  last_used_at: null,
  consumer_tools: null,
};

describe('table', () => {
  it('aligns the listed fields under their upper-cased names, two spaces apart, without trailing spaces', () => {
    expect(listTable(organisationView, [org('o1', 'Harbour Tales'), org('oabcdefghijkl', 'V')])).toBe(
      [
        'ID             NAME           KIND   QUOTA                                       CREATED_AT',
        'o1             Harbour Tales  house  standard (20/s, bursts of 40, 100,000/day)  2026-11-22T05:00:00.000Z',
        'oabcdefghijkl  V              house  standard (20/s, bursts of 40, 100,000/day)  2026-11-22T05:00:00.000Z',
        '',
      ].join('\n'),
    );
  });

  it('prints the header alone for an empty list', () => {
    expect(listTable(connectionView, [])).toBe('CLIENT_ID  NAME  KIND  STATUS  APP_ID  WORKSPACE_ID  CREATED_AT  LAST_USED_AT\n');
  });

  it('keeps a row on one line and the terminal untouched whatever a name holds', () => {
    const out = listTable(organisationView, [org('o1', 'evil\nname\u001b[31m\u009b')]);
    expect(out.split('\n')).toHaveLength(3);
    expect(out).toContain('evil name [31m ');
    expect([...out].filter((ch) => ch !== '\n' && (ch < ' ' || (ch >= '\u007f' && ch <= '\u009f')))).toEqual([]);
  });

  it('shows a missing value as -', () => {
    expect(fields(connectionView.fields, connection)).toContain('status_changed_at   -\n');
  });
});

describe('fields', () => {
  it('shows one resource as aligned "field  value" lines', () => {
    expect(fields(connectionView.fields, connection)).toBe(
      [
        'client_id           cabcdefghijkl',
        'name                Story publisher',
        'description         -',
        'kind                producer',
        'status              active',
        'app_id              aabcdefghijkl',
        'workspace_id        wabcdefghijkl',
        'organisation_id     oabcdefghijkl',
        'credential_version  2',
        'created_at          2026-11-22T05:00:00.000Z',
        'status_changed_at   -',
        'last_used_at        -',
        'consumer_tools      -',
        '',
      ].join('\n'),
    );
  });

  it("shows a consumer's testing settings on one line, and each as a field after a change", () => {
    const tested: Connection = {
      ...connection,
      kind: 'consumer',
      consumer_tools: { faults: { duplicate_rate: 0.25, delay_ms: 500, early_expiry_rate: 0 }, max_receives: null },
    };
    expect(fields(connectionView.fields, tested)).toContain('consumer_tools      duplicate_rate 0.25, delay 500 ms, early_expiry_rate 0, max_receives off\n');
    expect(fields(consumerToolsFields, tested)).toBe(
      'client_id          cabcdefghijkl\nduplicate_rate     0.25\ndelay_ms           500\nearly_expiry_rate  0\nmax_receives       off\n',
    );
    expect(fields(consumerToolsFields, connection)).toContain('duplicate_rate     0\n');
  });

  it('lists open dead letters, saying when more are open than listed', () => {
    const letter = { id: '7', message_id: 'm1', correlation_id: 'story-1', receive_count: 3, dead_lettered_at: '2026-11-22T05:00:00.000Z' };
    const out = renderDeadLetters({ client_id: 'c1', dead_letters: [letter], truncated: false });
    expect(out).toBe(
      'ID  MESSAGE_ID  CORRELATION_ID  RECEIVE_COUNT  DEAD_LETTERED_AT\n7   m1          story-1         3              2026-11-22T05:00:00.000Z\n',
    );
    expect(renderDeadLetters({ client_id: 'c1', dead_letters: [letter], truncated: true })).toContain('More dead letters are open: the oldest 1 are listed.\n');
  });

  it('lists an app’s permissions, (none) when empty', () => {
    const app: App = {
      id: 'a1',
      workspace_id: 'w1',
      organisation_id: 'o1',
      name: 'Reader',
      permissions: { system_ids: ['sys-a', 'sys-b'], message_types: [] },
      created_at: '2026-11-22T05:00:00.000Z',
    };
    expect(fields(permissionFields, app)).toBe('app_id         a1\nsystem_ids     sys-a, sys-b\nmessage_types  (none)\n');
    expect(fields(appView.fields, app)).toContain('system_ids       sys-a, sys-b\n');
  });

  it('shows queue stats with the oldest age readable, - when the queue is empty', () => {
    const stats: QueueStats = { client_id: 'c1', depth: 12_345, in_flight: 3, dead_letters: 2, oldest_age_seconds: 3_725 };
    expect(fields(queueFields, stats)).toBe('client_id     c1\ndepth         12,345\nin_flight     3\ndead_letters  2\noldest_age    1h 2m\n');
    expect(fields(queueFields, { ...stats, depth: 0, in_flight: 0, dead_letters: 0, oldest_age_seconds: null })).toContain('oldest_age    -\n');
  });

  it('shows how many messages a purge removed', () => {
    expect(fields(queuePurgedFields, { purged: 1_204 })).toBe('purged  1,204\n');
  });

  it('shows a replay’s counts', () => {
    const replay: Replay = {
      replay_id: 'p1',
      client_id: 'c1',
      since: '2026-11-22T04:00:00.000Z',
      status: 'succeeded',
      scanned: 1200,
      replayed: 1000,
      skipped: 200,
      requested_at: '2026-11-22T06:00:00.000Z',
      finished_at: '2026-11-22T06:00:04.000Z',
      error: null,
    };
    expect(fields(replayFields, replay)).toMatch(/status\s+succeeded\nscanned\s+1,200\nreplayed\s+1,000\nskipped\s+200\n/);
  });
});

describe('registrations', () => {
  it('tables each instance with its registration id, - for an unversioned skill', () => {
    const registration: Registration = {
      registration_id: 'r1',
      library_version: '2026.11.1',
      registered_at: '2026-11-22T06:00:00.000Z',
      instance: { skill_id: 'telling/pacing', instance_label: 'pace' },
    };
    expect(table(registrationColumns, [registration])).toBe(
      [
        'REGISTRATION_ID  SKILL_ID        SKILL_VERSION  INSTANCE_LABEL  LIBRARY_VERSION  REGISTERED_AT',
        'r1               telling/pacing  -              pace            2026.11.1        2026-11-22T06:00:00.000Z',
        '',
      ].join('\n'),
    );
  });
});

describe('renderTrace', () => {
  it("shows the acceptance, then one row per consumer connection, a revoked one's state saying so", () => {
    const trace: MessageTrace = {
      message_id: 'm1',
      message_type: 'telling.started',
      correlation_id: 'c-1',
      producer_connection_id: 'cproducer2345',
      accepted_at: '2026-11-22T06:00:00.000Z',
      kafka: { partition: 2, offset: '41' },
      deliveries_truncated: false,
      deliveries: [
        {
          consumer_id: 'cconsumer2345',
          connection_status: 'active',
          state: 'acked',
          enqueued_at: '2026-11-22T06:00:01.000Z',
          visible_at: null,
          receive_count: 2,
          acked_at: '2026-11-22T06:00:09.000Z',
          nack_count: 1,
          last_nacked_at: '2026-11-22T06:00:05.000Z',
          dead_letter: null,
          faults: [],
        },
        {
          consumer_id: 'crevoked23456',
          connection_status: 'revoked',
          state: 'not_enqueued',
          enqueued_at: null,
          visible_at: null,
          receive_count: 0,
          acked_at: null,
          nack_count: 0,
          last_nacked_at: null,
          dead_letter: null,
          faults: [],
        },
      ],
    };
    expect(renderTrace(trace)).toBe(
      [
        'message_id      m1',
        'message_type    telling.started',
        'correlation_id  c-1',
        'producer        cproducer2345',
        'accepted_at     2026-11-22T06:00:00.000Z',
        'kafka           partition 2, offset 41',
        '',
        'CONSUMER       STATE                              ENQUEUED_AT               VISIBLE_AT  RECEIVES  NACKS  LAST_NACKED_AT            ACKED_AT                  DEAD_LETTER  FAULTS',
        'cconsumer2345  acked                              2026-11-22T06:00:01.000Z  -           2         1      2026-11-22T06:00:05.000Z  2026-11-22T06:00:09.000Z  -            -',
        'crevoked23456  not_enqueued (connection revoked)  -                         -           0         0      -                         -                         -            -',
        '',
      ].join('\n'),
    );
    // An answer that left consumer connections out says so under the table.
    expect(renderTrace({ ...trace, deliveries_truncated: true })).toMatch(/-\nMore consumer connections hold or may get this message than the 2 listed\.\n$/);
  });

  it("shows each delivery's dead letter and injected faults, then every fault with its time and detail", () => {
    const trace: MessageTrace = {
      message_id: 'm2',
      message_type: 'story.context',
      correlation_id: 'c-2',
      producer_connection_id: 'cproducer2345',
      accepted_at: '2026-11-22T07:00:00.000Z',
      kafka: { partition: 0, offset: '7' },
      deliveries_truncated: false,
      deliveries: [
        {
          consumer_id: 'cfaulted23456',
          connection_status: 'active',
          state: 'dead_lettered',
          enqueued_at: '2026-11-22T07:00:01.000Z',
          visible_at: null,
          receive_count: 3,
          acked_at: null,
          nack_count: 0,
          last_nacked_at: null,
          dead_letter: { dead_lettered_at: '2026-11-22T07:00:30.000Z', resolution: null, resolved_at: null },
          faults: [
            { kind: 'delay', at: '2026-11-22T07:00:01.000Z', detail_ms: 200 },
            { kind: 'duplicate', at: '2026-11-22T07:00:10.000Z', detail_ms: null },
            { kind: 'early_expiry', at: '2026-11-22T07:00:20.000Z', detail_ms: 1000 },
            { kind: 'early_expiry', at: '2026-11-22T07:00:25.000Z', detail_ms: 1000 },
          ],
        },
        {
          consumer_id: 'credriven2345',
          connection_status: 'active',
          state: 'acked',
          enqueued_at: '2026-11-22T07:00:01.000Z',
          visible_at: null,
          receive_count: 1,
          acked_at: '2026-11-22T07:02:00.000Z',
          nack_count: 0,
          last_nacked_at: null,
          dead_letter: { dead_lettered_at: '2026-11-22T07:00:40.000Z', resolution: 'redriven', resolved_at: '2026-11-22T07:01:00.000Z' },
          faults: [],
        },
      ],
    };
    // The acceptance's six fields and the blank line after them are as in the case above.
    expect(renderTrace(trace).split('\n').slice(7)).toEqual([
      'CONSUMER       STATE          ENQUEUED_AT               VISIBLE_AT  RECEIVES  NACKS  LAST_NACKED_AT  ACKED_AT                  DEAD_LETTER                          FAULTS',
      'cfaulted23456  dead_lettered  2026-11-22T07:00:01.000Z  -           3         0      -               -                         open since 2026-11-22T07:00:30.000Z  delay 1, duplicate 1, early_expiry 2',
      'credriven2345  acked          2026-11-22T07:00:01.000Z  -           1         0      -               2026-11-22T07:02:00.000Z  redriven 2026-11-22T07:01:00.000Z    -',
      '',
      'CONSUMER       KIND          AT                        DETAIL_MS',
      'cfaulted23456  delay         2026-11-22T07:00:01.000Z  200',
      'cfaulted23456  duplicate     2026-11-22T07:00:10.000Z  -',
      'cfaulted23456  early_expiry  2026-11-22T07:00:20.000Z  1000',
      'cfaulted23456  early_expiry  2026-11-22T07:00:25.000Z  1000',
      '',
    ]);
  });
});

describe('formatQuota', () => {
  it('names the tier and its limits', () => {
    expect(formatQuota({ tier: 'custom', per_second: 200, burst: 400, per_day: 10_000_000 })).toBe('custom (200/s, bursts of 400, 10,000,000/day)');
  });
});

describe('renderIssued', () => {
  const issued: IssuedCredential = { client_id: connection.client_id, client_secret: 'sbs_secret', credential_version: 2, connection };

  it('shows the connection, then the secret', () => {
    const out = renderIssued(issued);
    expect(out).toContain('client_secret       sbs_secret\n');
    expect(out.indexOf('status_changed_at')).toBeLessThan(out.indexOf('client_secret'));
    expect(out).not.toContain('previous_secret_usable_until');
  });

  it('says until when the previous secret works after a rotation', () => {
    expect(renderIssued({ ...issued, previous_secret_usable_until: '2026-11-22T07:00:00.000Z' })).toContain(
      'previous_secret_usable_until  2026-11-22T07:00:00.000Z\n',
    );
  });
});
