import { parseArgs } from 'node:util';
import { parseCommandOptions } from './options';
import { COMMANDS, GROUPS, type Command, type Input, type OptionSpec, type Plan } from './commands';
import { DEFAULT_URL } from './config';
import { isUsageError, UsageError } from './errors';

const GLOBAL_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  json: { type: 'boolean', help: "print the API's JSON body as it is (pretty)" },
  url: { type: 'string', value: '<url>', help: `the portal's base URL (default $BUSCTL_URL, else ${DEFAULT_URL})` },
  help: { type: 'boolean', short: 'h', help: 'this help' },
};

export type Invocation =
  { kind: 'help'; text: string } | { kind: 'usage'; message: string; help: string } | { kind: 'run'; plan: Plan; json: boolean; url: string | undefined };

type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

function optionLines(options: Readonly<Record<string, OptionSpec>>): string[] {
  const rows = Object.entries(options).map(
    ([name, spec]) => [`${spec.short ? `-${spec.short}, ` : ''}--${name}${spec.value ? ` ${spec.value}` : ''}`, spec.help] as const,
  );
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, help]) => `  ${left.padEnd(width)}  ${help}`);
}

function commandsOf(group: string): Command[] {
  return COMMANDS.filter((c) => c.path[0] === group);
}

export function topHelp(): string {
  const width = Math.max(...Object.keys(GROUPS).map((g) => g.length));
  return [
    "busctl: the operator's CLI over the portal admin API (/api/admin).",
    '',
    'Usage: busctl <group> <command> [options]',
    '',
    'Groups:',
    ...Object.entries(GROUPS).map(([group, summary]) => `  ${group.padEnd(width)}  ${summary}`),
    '',
    "A producer's commands (a producer connection's credentials; `busctl validate --help`, `busctl simulate --help`, `busctl story --help`):",
    '  busctl validate <file|dir>...  check SOM message files, print a table, write JUnit/CTRF reports',
    '  busctl simulate                publish generated valid SOM stories at a set pace, for consumer teams',
    '  busctl run start|stop|report   test runs and their conformance reports (JSON, JUnit, CTRF)',
    '  busctl story export <corr_id>  what a story exchanged (bytes, deliveries, acks) as NDJSON, for evidence',
    '',
    'Global options:',
    ...optionLines(GLOBAL_OPTIONS),
    '',
    'Environment:',
    `  BUSCTL_URL            the portal's base URL (default ${DEFAULT_URL}); --url overrides it`,
    '  BUSCTL_CLIENT_ID      the operator client id (HTTP Basic on every request)',
    '  BUSCTL_CLIENT_SECRET  the operator client secret',
    '',
    'Exit codes: 0 done; 1 the API refused, could not be reached, a replay did not succeed or a redrive left a record in quarantine; 2 usage error.',
    "Run `busctl <group> --help` for a group's commands, `busctl <group> <command> --help` for one command.",
    '',
  ].join('\n');
}

export function groupHelp(group: string): string {
  const commands = commandsOf(group);
  const width = Math.max(...commands.map((c) => c.path.join(' ').length));
  return [
    `busctl ${group}: ${GROUPS[group]}`,
    '',
    'Commands:',
    ...commands.map((c) => `  busctl ${c.path.join(' ').padEnd(width)}  ${c.summary}`),
    '',
    `Run \`busctl ${group} <command> --help\` for a command's options.`,
    '',
  ].join('\n');
}

export function commandHelp(command: Command): string {
  return [
    `busctl ${command.path.join(' ')}: ${command.summary}`,
    '',
    `Usage: busctl ${command.path.join(' ')}${command.usage ? ` ${command.usage}` : ''} [--json] [--url <url>]`,
    '',
    ...(Object.keys(command.options).length > 0 ? ['Options:', ...optionLines(command.options), ''] : []),
    'Global options:',
    ...optionLines(GLOBAL_OPTIONS),
    '',
  ].join('\n');
}

/** Every option of every command, so a first pass can tell option values from the command words. */
const ALL_OPTIONS = Object.assign({}, GLOBAL_OPTIONS, ...COMMANDS.map((c) => c.options)) as Record<string, OptionSpec>;

/** OptionSpec → node:util parseArgs options, which refuse keys present with an undefined value. */
function parseConfig(options: Readonly<Record<string, OptionSpec>>) {
  return Object.fromEntries(
    Object.entries(options).map(([name, { type, multiple, short }]) => [name, { type, ...(multiple ? { multiple } : {}), ...(short ? { short } : {}) }]),
  );
}

function inputFrom(command: Command, values: Values, positionals: readonly string[], now: Date): Input {
  const string = (name: string): string | undefined => {
    const value = values[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} must not be empty`);
    return value;
  };
  const missing = (name: string) => new UsageError(`missing --${name}${command.options[name]?.value ? ` ${command.options[name]?.value}` : ''}`);
  return {
    string,
    need: (name) => {
      const value = string(name);
      if (value === undefined) throw missing(name);
      return value;
    },
    list: (name) => {
      const given = (values[name] ?? []) as string[];
      const items = given.flatMap((v) => v.split(',')).map((v) => v.trim());
      if (items.length === 0) throw missing(name);
      if (items.some((v) => v === '')) throw new UsageError(`--${name} has an empty value`);
      return items;
    },
    flag: (name) => values[name] === true,
    positional: (index) => positionals[index] as string,
    rest: positionals.slice(command.positionals.length),
    now,
  };
}

/**
 * argv (after `busctl`) → help to print, a usage error, or the admin API call to make. Global
 * options may stand anywhere; --help anywhere shows the help of the deepest command named.
 */
export function parseCommandLine(argv: readonly string[], now: Date): Invocation {
  const first = parseArgs({ args: [...argv], options: parseConfig(ALL_OPTIONS), strict: false, allowPositionals: true });
  const words = first.positionals;
  const wantsHelp = first.values.help === true;
  const group = words[0];
  if (group === undefined) return wantsHelp ? { kind: 'help', text: topHelp() } : { kind: 'usage', message: 'missing the command', help: topHelp() };
  if (!Object.hasOwn(GROUPS, group)) return { kind: 'usage', message: `unknown command '${group}'`, help: topHelp() };
  const command = commandsOf(group).find((c) => c.path.every((word, i) => words[i] === word));
  if (command === undefined) {
    if (wantsHelp) return { kind: 'help', text: groupHelp(group) };
    return {
      kind: 'usage',
      message: words[1] === undefined ? `missing the ${group} command` : `unknown command '${group} ${words[1]}'`,
      help: groupHelp(group),
    };
  }
  const help = commandHelp(command);
  if (wantsHelp) return { kind: 'help', text: help };
  try {
    const { values, positionals } = parseCommandOptions({
      args: [...argv],
      options: parseConfig({ ...GLOBAL_OPTIONS, ...command.options }),
      allowPositionals: true,
    });
    const rest = positionals.slice(command.path.length);
    const missing = command.positionals[rest.length];
    if (missing !== undefined) throw new UsageError(`missing ${missing}`);
    if (rest.length > command.positionals.length && command.rest === undefined)
      throw new UsageError(`unexpected argument '${rest[command.positionals.length]}'`);
    const blank = rest.findIndex((word) => word.trim() === '');
    if (blank >= 0) throw new UsageError(`${command.positionals[blank] ?? command.rest} must not be empty`);
    const plan = command.plan(inputFrom(command, values, rest, now));
    return { kind: 'run', plan, json: values.json === true, url: typeof values.url === 'string' ? values.url : undefined };
  } catch (err) {
    if (isUsageError(err)) return { kind: 'usage', message: (err as Error).message, help };
    throw err;
  }
}
