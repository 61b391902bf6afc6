import { commandHelp, groupHelp, parseCommandLine, topHelp } from './args';
import { COMMANDS, GROUPS, type ApiRequest } from './commands';
import { SECRET_NOTE } from './render';

const NOW = new Date('2026-11-22T06:00:00.000Z');

function request(argv: string[]): ApiRequest {
  const invocation = parseCommandLine(argv, NOW);
  if (invocation.kind !== 'run') throw new Error(`expected a request, got ${JSON.stringify(invocation)}`);
  return invocation.plan.request;
}

function usage(argv: string[]): { message: string; help: string } {
  const invocation = parseCommandLine(argv, NOW);
  if (invocation.kind !== 'usage') throw new Error(`expected a usage error, got ${JSON.stringify(invocation)}`);
  return invocation;
}

const words = (line: string): string[] => line.split(' ');
const helpOf = (path: string) => commandHelp(COMMANDS.find((c) => c.path.join(' ') === path)!);

describe('every command → its admin API request', () => {
  it.each<[string, ApiRequest]>([
    ['org create --name Harbour --kind house', { method: 'POST', path: '/organisations', json: { name: 'Harbour', kind: 'house' } }],
    [
      'org create --name V --kind vendor --tier minimal',
      { method: 'POST', path: '/organisations', json: { name: 'V', kind: 'vendor', quota: { tier: 'minimal' } } },
    ],
    ['org list', { method: 'GET', path: '/organisations', query: {} }],
    ['org show oabcdefghijkl', { method: 'GET', path: '/organisations/oabcdefghijkl' }],
    ['workspace create --org o1 --name Sandbox', { method: 'POST', path: '/workspaces', json: { organisation_id: 'o1', name: 'Sandbox' } }],
    [
      'workspace create --org o1 --name S --tier high',
      { method: 'POST', path: '/workspaces', json: { organisation_id: 'o1', name: 'S', quota: { tier: 'high' } } },
    ],
    ['workspace list', { method: 'GET', path: '/workspaces', query: {} }],
    ['workspace list --org o1', { method: 'GET', path: '/workspaces', query: { organisation_id: 'o1' } }],
    ['workspace show w1', { method: 'GET', path: '/workspaces/w1' }],
    ['app create --workspace w1 --name Reader', { method: 'POST', path: '/apps', json: { workspace_id: 'w1', name: 'Reader' } }],
    ['app create --workspace w1 --name R --org o2', { method: 'POST', path: '/apps', json: { workspace_id: 'w1', name: 'R', organisation_id: 'o2' } }],
    ['app list', { method: 'GET', path: '/apps', query: {} }],
    ['app list --workspace w1', { method: 'GET', path: '/apps', query: { workspace_id: 'w1' } }],
    ['app show a1', { method: 'GET', path: '/apps/a1' }],
    ['connection create --app a1 --kind producer', { method: 'POST', path: '/connections', json: { app_id: 'a1', kind: 'producer' } }],
    ['connection create --kind consumer --app a1', { method: 'POST', path: '/connections', json: { app_id: 'a1', kind: 'consumer' } }],
    ['connection list', { method: 'GET', path: '/connections', query: {} }],
    ['connection list --workspace w1 --app a1', { method: 'GET', path: '/connections', query: { workspace_id: 'w1', app_id: 'a1' } }],
    ['connection show c1', { method: 'GET', path: '/connections/c1' }],
    ['connection remove c1', { method: 'DELETE', path: '/connections/c1' }],
    ['credential rotate c1 --overlap 1h', { method: 'POST', path: '/connections/c1/rotate', json: { overlap_seconds: 3600 } }],
    ['credential rotate --overlap 0s c1', { method: 'POST', path: '/connections/c1/rotate', json: { overlap_seconds: 0 } }],
    ['credential revoke c1', { method: 'POST', path: '/connections/c1/revoke' }],
    [
      'permission set --app a1 --system-id sys-a --system-id sys-b,sys-c --message-type telling.started,telling.ended',
      { method: 'PUT', path: '/apps/a1/permissions', json: { system_ids: ['sys-a', 'sys-b', 'sys-c'], message_types: ['telling.started', 'telling.ended'] } },
    ],
    ['permission show --app a1', { method: 'GET', path: '/apps/a1' }],
    ['tier set --workspace w1 standard', { method: 'PUT', path: '/workspaces/w1/quota', json: { tier: 'standard' } }],
    ['tier set minimal --org o1', { method: 'PUT', path: '/organisations/o1/quota', json: { tier: 'minimal' } }],
    [
      'tier set --workspace w1 custom --per-second 50 --burst 100 --per-day 200000',
      { method: 'PUT', path: '/workspaces/w1/quota', json: { tier: 'custom', per_second: 50, burst: 100, per_day: 200000 } },
    ],
    [
      'idp create --issuer https://login.example.com/ --jwks-url https://login.example.com/jwks --audience bus --audience bus2 --client-claim azp',
      {
        method: 'POST',
        path: '/identity-providers',
        json: { issuer: 'https://login.example.com/', jwks_url: 'https://login.example.com/jwks', audiences: ['bus', 'bus2'], client_claim: 'azp' },
      },
    ],
    [
      'idp create --issuer i --jwks-url u --audience bus --client-claim sub --algorithms ES256,EdDSA --clock-tolerance 30',
      {
        method: 'POST',
        path: '/identity-providers',
        json: { issuer: 'i', jwks_url: 'u', audiences: ['bus'], client_claim: 'sub', algorithms: ['ES256', 'EdDSA'], clock_tolerance_seconds: 30 },
      },
    ],
    ['idp list', { method: 'GET', path: '/identity-providers', query: {} }],
    ['idp show i1', { method: 'GET', path: '/identity-providers/i1' }],
    ['idp remove i1', { method: 'DELETE', path: '/identity-providers/i1' }],
    [
      'binding add --idp i1 --client studio --connection c1',
      { method: 'POST', path: '/identity-providers/i1/bindings', json: { client: 'studio', connection_id: 'c1' } },
    ],
    ['binding list --idp i1', { method: 'GET', path: '/identity-providers/i1/bindings', query: {} }],
    ['binding remove --idp i1 b1', { method: 'DELETE', path: '/identity-providers/i1/bindings/b1' }],
    [
      'registration add --consumer c1 -f skills.yaml',
      { method: 'POST', path: '/connections/c1/registrations', file: { path: 'skills.yaml', contentType: 'application/yaml' } },
    ],
    [
      'registration add --consumer c1 --file dir.v2/S.YML',
      { method: 'POST', path: '/connections/c1/registrations', file: { path: 'dir.v2/S.YML', contentType: 'application/yaml' } },
    ],
    [
      'registration add --consumer c1 -f ./skills.json',
      { method: 'POST', path: '/connections/c1/registrations', file: { path: './skills.json', contentType: 'application/json' } },
    ],
    ['registration list --consumer c1', { method: 'GET', path: '/connections/c1/registrations' }],
    ['registration remove --consumer c1 r1', { method: 'DELETE', path: '/connections/c1/registrations/r1' }],
    ['replay --consumer c1 --since 2h', { method: 'POST', path: '/connections/c1/replays', json: { since: '2026-11-22T04:00:00.000Z' } }],
    [
      'replay --consumer c1 --since 2026-11-21T12:00:00+01:00',
      { method: 'POST', path: '/connections/c1/replays', json: { since: '2026-11-21T11:00:00.000Z' } },
    ],
    ['queue stats --consumer c1', { method: 'GET', path: '/connections/c1/queue' }],
    ['queue purge --consumer c1', { method: 'POST', path: '/connections/c1/purge' }],
    ['message trace w1 0b6e2c1a-6f4e-4c54-9d2a-1f7c3e9b8a01', { method: 'GET', path: '/workspaces/w1/messages/0b6e2c1a-6f4e-4c54-9d2a-1f7c3e9b8a01' }],
    ['quarantine list', { method: 'GET', path: '/quarantine', query: {} }],
    [
      'quarantine list --workspace w1 --reason acceptance.missing --limit 20 --after 41',
      { method: 'GET', path: '/quarantine', query: { workspace_id: 'w1', reason: 'acceptance.missing', limit: '20', after: '41' } },
    ],
    ['quarantine redrive 12', { method: 'POST', path: '/quarantine/redrive', json: { ids: ['12'] } }],
    ['quarantine redrive 12 13 14', { method: 'POST', path: '/quarantine/redrive', json: { ids: ['12', '13', '14'] } }],
    ['quarantine redrive --workspace w1', { method: 'POST', path: '/quarantine/redrive', json: { workspace_id: 'w1' } }],
    ['quarantine redrive --workspace w1 --after 41', { method: 'POST', path: '/quarantine/redrive', json: { workspace_id: 'w1', after: '41' } }],
  ])('busctl %s', (line, expected) => {
    expect(request(words(line))).toEqual(expected);
  });

  it('percent-encodes ids, so an id cannot reach another route', () => {
    expect(request(['connection', 'show', '../organisations'])).toMatchObject({ path: '/connections/..%2Forganisations' });
    expect(request(['registration', 'remove', '--consumer', 'c?x=1', 'r#1'])).toMatchObject({ path: '/connections/c%3Fx%3D1/registrations/r%231' });
  });

  it('takes global options anywhere and --flag=value forms', () => {
    const invocation = parseCommandLine(['--json', 'org', '--url=http://portal:9', 'show', 'o1'], NOW);
    expect(invocation).toMatchObject({ kind: 'run', json: true, url: 'http://portal:9', plan: { request: { path: '/organisations/o1' } } });
    expect(parseCommandLine(['org', 'list'], NOW)).toMatchObject({ kind: 'run', json: false, url: undefined });
  });

  it('waits for a replay unless --no-wait', () => {
    expect(parseCommandLine(words('replay --consumer c1 --since 1h'), NOW)).toMatchObject({ plan: { awaitReplay: true } });
    expect(parseCommandLine(words('replay --consumer c1 --since 1h --no-wait'), NOW)).toMatchObject({ plan: { awaitReplay: false } });
  });

  it.each([
    ['connection create --app a1 --kind producer', SECRET_NOTE],
    ['credential rotate c1 --overlap 1h', SECRET_NOTE],
    ['connection show c1', undefined],
    ['credential revoke c1', undefined],
  ])('busctl %s says the secret is shown once only where one is shown', (line, note) => {
    const invocation = parseCommandLine(words(line), NOW);
    expect(invocation.kind === 'run' && invocation.plan.note).toBe(note);
  });
});

describe('bad input → a usage error saying what is wrong, with the help to fix it', () => {
  it.each<[string, string, string]>([
    ['org create --kind house', 'missing --name <name>', 'org create'],
    ['org create --name N', 'missing --kind house|vendor|operator', 'org create'],
    ['org create --name N --kind shop', "--kind must be one of house, vendor, operator, not 'shop'", 'org create'],
    ['org create --name N --kind house --tier custom', "--tier must be one of minimal, standard, high, not 'custom'", 'org create'],
    ['org create --name= --kind house', '--name must not be empty', 'org create'],
    ['org create --name N --kind house --nam x', "Unknown option '--nam'", 'org create'],
    ['org show', 'missing <o>', 'org show'],
    ['org show o1 o2', "unexpected argument 'o2'", 'org show'],
    ['org list --org o1', "Unknown option '--org'", 'org list'],
    ['workspace create --name S', 'missing --org <o>', 'workspace create'],
    ['app create --workspace w1', 'missing --name <name>', 'app create'],
    ['connection create --app a1 --kind reader', "--kind must be one of producer, consumer, not 'reader'", 'connection create'],
    ['connection create --app a1', 'missing --kind producer|consumer', 'connection create'],
    ['connection remove', 'missing <c>', 'connection remove'],
    ['credential rotate c1', 'missing --overlap <duration>', 'credential rotate'],
    [
      'credential rotate c1 --overlap 1.5h',
      "--overlap must be a whole number followed by s, m, h or d (e.g. 90s, 15m, 1h, 2d), not '1.5h'",
      'credential rotate',
    ],
    ['credential rotate --overlap 1h', 'missing <c>', 'credential rotate'],
    ['permission set --app a1 --message-type t', 'missing --system-id <id>', 'permission set'],
    ['permission set --app a1 --system-id s', 'missing --message-type <type>', 'permission set'],
    ['permission set --app a1 --system-id s,,t --message-type t', '--system-id has an empty value', 'permission set'],
    ['permission set --system-id s --message-type t', 'missing --app <a>', 'permission set'],
    ['tier set standard', 'give exactly one of --workspace and --org', 'tier set'],
    ['tier set --workspace w1 --org o1 standard', 'give exactly one of --workspace and --org', 'tier set'],
    ['tier set --workspace w1', 'missing minimal|standard|high|custom', 'tier set'],
    ['tier set --workspace w1 premium', "the tier must be one of minimal, standard, high, custom, not 'premium'", 'tier set'],
    ['tier set --workspace w1 standard --burst 5', '--per-second, --burst and --per-day go with the custom tier only', 'tier set'],
    ['tier set --workspace w1 custom --per-second 5 --burst 10', 'missing --per-day <n>', 'tier set'],
    ['tier set --workspace w1 custom --per-second 5 --burst ten --per-day 9', "--burst must be a whole number, not 'ten'", 'tier set'],
    ['tier set --workspace w1 custom --per-second=-5 --burst 1 --per-day 9', "--per-second must be a whole number, not '-5'", 'tier set'],
    ['registration add --consumer c1', 'missing --file <file>', 'registration add'],
    ['registration add --consumer c1 -f skills.txt', "--file must end in .yaml, .yml or .json, not 'skills.txt'", 'registration add'],
    ['registration add --consumer c1 -f yaml', "--file must end in .yaml, .yml or .json, not 'yaml'", 'registration add'],
    ['registration add -f s.yaml', 'missing --consumer <c>', 'registration add'],
    ['registration remove --consumer c1', 'missing <registration_id>', 'registration remove'],
    ['replay --consumer c1', 'missing --since <when>', 'replay'],
    [
      'replay --consumer c1 --since yesterday',
      "--since must be a whole number followed by s, m, h or d (e.g. 90s, 15m, 1h, 2d), or an RFC 3339 time such as 2026-11-22T06:00:00Z, not 'yesterday'",
      'replay',
    ],
    ['replay --consumer c1 --since 2h --no-wait=yes', "Option '--no-wait' does not take an argument", 'replay'],
    ['queue stats', 'missing --consumer <c>', 'queue stats'],
    [
      'quarantine list --reason late',
      "--reason must be one of headers.unreadable, value.missing, value.unreadable, acceptance.missing, acceptance.hash_mismatch, not 'late'",
      'quarantine list',
    ],
    ['quarantine list --limit ten', "--limit must be a whole number, not 'ten'", 'quarantine list'],
    ['quarantine list 12', "unexpected argument '12'", 'quarantine list'],
    ['quarantine redrive', 'give record ids or --workspace, one of the two', 'quarantine redrive'],
    ['quarantine redrive 12 --workspace w1', 'give record ids or --workspace, one of the two', 'quarantine redrive'],
    ['quarantine redrive 12 --after 11', '--after goes with --workspace', 'quarantine redrive'],
    [
      `quarantine redrive ${Array.from({ length: 101 }, (_, i) => i + 1).join(' ')}`,
      'at most 100 ids at a time (--workspace takes all of a workspace)',
      'quarantine redrive',
    ],
  ])('busctl %s', (line, message, path) => {
    const error = usage(words(line));
    expect(error.message).toContain(message);
    expect(error.help).toBe(helpOf(path));
  });

  it('refuses an option of one value given twice, a global one too', () => {
    expect(usage(words('org create --name first --name second --kind house')).message).toBe('--name is given more than once');
    expect(usage(words('org list --url http://127.0.0.1:1 --url http://127.0.0.1:8090')).message).toBe('--url is given more than once');
  });

  it('refuses an option missing its value', () => {
    expect(usage(['org', 'show', 'o1', '--url']).message).toMatch(/--url <value>' argument missing/);
  });

  it('refuses an empty positional', () => {
    expect(usage(['connection', 'show', '']).message).toBe('<c> must not be empty');
    expect(usage(['quarantine', 'redrive', '12', ' ']).message).toBe('<id…> must not be empty');
  });

  it.each<[string[], string, string]>([
    [[], 'missing the command', topHelp()],
    [['--json'], 'missing the command', topHelp()],
    [['orgs', 'list'], "unknown command 'orgs'", topHelp()],
    [['constructor'], "unknown command 'constructor'", topHelp()],
    [['connection'], 'missing the connection command', groupHelp('connection')],
    [['connection', 'rotate', 'c1'], "unknown command 'connection rotate'", groupHelp('connection')],
  ])('busctl %j: %s', (argv, message, help) => {
    expect(usage(argv)).toEqual({ kind: 'usage', message, help });
  });
});

describe('--help / -h on every level', () => {
  it.each([[['--help']], [['-h']], [['--json', '-h']]])('busctl %j shows every group', (argv) => {
    const invocation = parseCommandLine(argv, NOW);
    expect(invocation).toEqual({ kind: 'help', text: topHelp() });
    for (const group of Object.keys(GROUPS)) expect(topHelp()).toContain(`  ${group} `);
    expect(topHelp()).toMatch(/BUSCTL_URL[\s\S]*BUSCTL_CLIENT_ID[\s\S]*BUSCTL_CLIENT_SECRET/);
  });

  it.each(Object.keys(GROUPS).filter((g) => g !== 'replay'))('busctl %s --help lists its commands', (group) => {
    expect(parseCommandLine([group, '--help'], NOW)).toEqual({ kind: 'help', text: groupHelp(group) });
    for (const command of COMMANDS.filter((c) => c.path[0] === group)) expect(groupHelp(group)).toContain(`busctl ${command.path.join(' ')} `);
  });

  it.each(COMMANDS.map((c) => [c.path.join(' ')]))('busctl %s --help shows its usage and every option', (path) => {
    const command = COMMANDS.find((c) => c.path.join(' ') === path)!;
    // Help wins over whatever else is wrong on the line: the operator asked how to write it.
    const invocation = parseCommandLine([...command.path, '--bogus', '-h'], NOW);
    expect(invocation).toEqual({ kind: 'help', text: commandHelp(command) });
    const text = commandHelp(command);
    expect(text).toContain(`Usage: busctl ${path}`);
    for (const name of Object.keys(command.options)) expect(text).toContain(`--${name}`);
    expect(text).toContain('--json');
  });

  it('shows an example of the help a command prints', () => {
    expect(helpOf('credential rotate')).toBe(
      [
        "busctl credential rotate: issue a connection's next secret; the previous one keeps obtaining tokens for the overlap",
        '',
        'Usage: busctl credential rotate <c> --overlap <duration> [--json] [--url <url>]',
        '',
        'Options:',
        '  --overlap <duration>  how long the previous secret still obtains tokens: a whole number followed by s, m, h or d (e.g. 90s, 15m, 1h, 2d)',
        '',
        'Global options:',
        "  --json       print the API's JSON body as it is (pretty)",
        "  --url <url>  the portal's base URL (default $BUSCTL_URL, else http://127.0.0.1:8090)",
        '  -h, --help   this help',
        '',
      ].join('\n'),
    );
  });
});
