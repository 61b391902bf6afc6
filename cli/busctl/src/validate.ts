import { parseCommandOptions } from './options';
import {
  BusProducer,
  BusRefusedError,
  BusUnreachableError,
  ctrfJson,
  junitXml,
  TokenRequestError,
  violationLine,
  type ReportCase,
  type TestReport,
  type Violation,
} from '@bus/client';
import { applySequence, type SomMessage, type StoryState } from '@bus/som';
import { isUsageError, UsageError } from './errors';

/** The file system and clock `busctl validate` uses, passed in so it is tested without disks or servers. */
export interface ValidateIo {
  fetch: typeof fetch;
  readFile(path: string): Promise<Uint8Array>;
  /** A directory's entries (names), or undefined when `path` is not a directory. */
  readDir(path: string): Promise<string[] | undefined>;
  writeFile(path: string, text: string): Promise<void>;
  stdout(text: string): void;
  stderr(text: string): void;
  sleep(ms: number): Promise<void>;
  now(): Date;
}

export const DEFAULT_BUS_URL = 'http://127.0.0.1:8080';
/** A 429 is waited out (Retry-After) and sent again this many times at most before the file counts as an error. */
const MAX_ATTEMPTS = 10;

/** The environment of a producer's command (validate, simulate), as their help lists it. */
export const PRODUCER_ENVIRONMENT_HELP = `  BUS_BASE_URL                the bus's base URL; --bus-url overrides it
  BUS_PRODUCER_CLIENT_ID      a producer connection's client id (the demo's .local/demo.env names these)
  BUS_PRODUCER_CLIENT_SECRET  its client secret
`.trimEnd();

export const VALIDATE_HELP = `busctl validate: check SOM message files through the bus's validate route (a dry run: nothing is
published or recorded), print a table, write CI reports, exit 1 when any is refused.

Usage: busctl validate [--ordered] [--junit <file>] [--ctrf <file>] [--json] [--bus-url <url>] <file|dir>...

A directory stands for its *.json files in name order. Files are sent one at a time; a 429 is waited
out as Retry-After says, so a corpus keeps to the connection's quota.

Options:
  --ordered          the files are one story in publish order: each is checked against the story state
                     the files before it would make (started from an empty story), not the workspace's
  --junit <file>     write a JUnit XML report (one testcase per file; a refusal is a failure)
  --ctrf <file>      write a CTRF JSON report
  --json             print each file's result as JSON instead of the table
  --bus-url <url>    the bus's base URL (default $BUS_BASE_URL, else ${DEFAULT_BUS_URL})
  -h, --help         this help

Environment:
${PRODUCER_ENVIRONMENT_HELP}

Exit codes: 0 every file accepted; 1 a file refused or not checked; 2 usage error.
`;

/** One file's verdict. */
export interface FileResult {
  file: string;
  /** From the file where it parses; the bus's answer otherwise. */
  message_type: string | null;
  outcome: 'accepted' | 'duplicate' | 'refused' | 'error';
  /** The bus's status (202, 200, 4xx); the local story check's 409 in ordered mode; null when unanswered. */
  status: number | null;
  violations: Violation[];
  /** error: what went wrong. */
  error?: string;
  duration_ms: number;
}

interface Options {
  ordered: boolean;
  junit?: string;
  ctrf?: string;
  json: boolean;
  busUrl: string;
  clientId: string;
  clientSecret: string;
  paths: string[];
}

function optionsFrom(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): Options | 'help' {
  const { values, positionals } = parseCommandOptions({
    args: [...argv],
    options: {
      ordered: { type: 'boolean' },
      junit: { type: 'string' },
      ctrf: { type: 'string' },
      json: { type: 'boolean' },
      'bus-url': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: true,
  });
  if (values.help) return 'help';
  if (positionals.length === 0) throw new UsageError('name at least one message file or directory');
  const connection = producerConnection(values['bus-url'], env);
  for (const name of ['junit', 'ctrf'] as const) {
    if (values[name] !== undefined && values[name].trim() === '') throw new UsageError(`--${name} must not be empty`);
  }
  return {
    ordered: values.ordered === true,
    ...(values.junit !== undefined ? { junit: values.junit } : {}),
    ...(values.ctrf !== undefined ? { ctrf: values.ctrf } : {}),
    json: values.json === true,
    ...connection,
    paths: positionals,
  };
}

/** The client of a producer's command: a 429 waited out and sent again up to MAX_ATTEMPTS times, on busctl's clock. */
export function producerFor(
  connection: { busUrl: string; clientId: string; clientSecret: string },
  io: Pick<ValidateIo, 'fetch' | 'now' | 'sleep'>,
): BusProducer {
  return new BusProducer({
    baseUrl: connection.busUrl,
    clientId: connection.clientId,
    clientSecret: connection.clientSecret,
    maxAttempts: MAX_ATTEMPTS,
    fetch: io.fetch,
    now: () => io.now(),
    pause: (ms) => io.sleep(ms),
  });
}

/** What a producer's command says when the token route refuses its credentials: the whole run's problem. */
export function tokenRefusal(err: TokenRequestError, busUrl: string): string {
  return `busctl: no token for BUS_PRODUCER_CLIENT_ID: ${err.message}\nCheck BUS_PRODUCER_CLIENT_ID, BUS_PRODUCER_CLIENT_SECRET and the bus URL (${busUrl}).\n`;
}

/**
 * What a producer's command prints when the whole run fails: its credentials refused, or the bus out of
 * reach (the network's own reason, connection refused or DNS, is the cause's cause: fetch wraps it).
 * Undefined for any other error.
 */
export function runFailure(err: unknown, busUrl: string): string | undefined {
  if (err instanceof TokenRequestError) return tokenRefusal(err, busUrl);
  if (!(err instanceof BusUnreachableError)) return undefined;
  const cause = (err.cause as { cause?: Error; message?: string } | undefined)?.cause ?? (err.cause as Error | undefined);
  return `busctl: cannot reach the bus at ${busUrl}: ${err.message}${cause?.message ? ` (${cause.message})` : ''}\n`;
}

/** The bus and producer credentials of a producer's command (validate, simulate): --bus-url or the environment. */
export function producerConnection(
  busUrlOption: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): { busUrl: string; clientId: string; clientSecret: string } {
  const busUrl = busUrlOption ?? (env.BUS_BASE_URL || DEFAULT_BUS_URL);
  let url: URL;
  try {
    url = new URL(busUrl);
  } catch {
    throw new UsageError(`${busUrlOption === undefined ? 'BUS_BASE_URL' : '--bus-url'} is not a URL: '${busUrl}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`the bus URL must be http or https, not '${busUrl}'`);
  const clientId = env.BUS_PRODUCER_CLIENT_ID;
  if (!clientId) throw new UsageError("BUS_PRODUCER_CLIENT_ID is not set: a producer connection's client id");
  const clientSecret = env.BUS_PRODUCER_CLIENT_SECRET;
  if (!clientSecret) throw new UsageError("BUS_PRODUCER_CLIENT_SECRET is not set: the producer connection's client secret");
  return { busUrl: url.origin + url.pathname.replace(/\/+$/, ''), clientId, clientSecret };
}

/** The files to send, in order: each argument as given, a directory as its *.json files by name. */
async function filesOf(io: ValidateIo, paths: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  for (const path of paths) {
    const entries = await io.readDir(path);
    if (entries === undefined) files.push(path);
    else
      files.push(
        ...entries
          .filter((name) => name.endsWith('.json'))
          .sort()
          .map((name) => `${path.replace(/\/+$/, '')}/${name}`),
      );
  }
  return files;
}

function parsedMessage(bytes: Uint8Array): Partial<SomMessage> | undefined {
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(bytes));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Partial<SomMessage>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * In ordered mode the bus's own sequence verdict (against the workspace's story state) is replaced
 * by the one the earlier files make, computed with the same rules the gateway runs (libs/som
 * applySequence); the bus still judges schema, conformance and policy. Story states are kept per
 * correlation id, and a refused file changes none, as on the bus.
 */
class OrderedStories {
  private readonly states = new Map<string, StoryState>();

  judge(result: FileResult, message: Partial<SomMessage> | undefined): FileResult {
    const onlySequence = result.outcome === 'refused' && result.violations.length > 0 && result.violations.every((v) => v.source === 'sequence');
    const passedTheRest = result.outcome === 'accepted' || result.outcome === 'duplicate' || onlySequence;
    if (!passedTheRest || message === undefined || typeof message.correlation_id !== 'string') return result;
    const outcome = applySequence(this.states.get(message.correlation_id) ?? null, message as SomMessage);
    if (!outcome.ok) return { ...result, outcome: 'refused', status: 409, violations: [...outcome.violations] };
    this.states.set(message.correlation_id, outcome.next);
    return onlySequence ? { ...result, outcome: 'accepted', status: 202, violations: [] } : result;
  }
}

async function check(producer: BusProducer, io: ValidateIo, file: string): Promise<{ result: FileResult; message: Partial<SomMessage> | undefined }> {
  const started = io.now().getTime();
  const elapsed = () => io.now().getTime() - started;
  let bytes: Uint8Array;
  try {
    bytes = await io.readFile(file);
  } catch (err) {
    return {
      result: { file, message_type: null, outcome: 'error', status: null, violations: [], error: `cannot read it: ${(err as Error).message}`, duration_ms: 0 },
      message: undefined,
    };
  }
  const message = parsedMessage(bytes);
  const typeOf = (answered?: string) => (typeof message?.message_type === 'string' ? message.message_type : (answered ?? null));
  try {
    const answer = await producer.validate(bytes);
    return {
      result: {
        file,
        message_type: typeOf(answer.message_type),
        outcome: answer.duplicate ? 'duplicate' : 'accepted',
        status: answer.status,
        violations: answer.tolerated,
        duration_ms: elapsed(),
      },
      message,
    };
  } catch (err) {
    // Wrong credentials are the whole run's problem, not this file's.
    if (err instanceof TokenRequestError) throw err;
    if (err instanceof BusRefusedError) {
      const outcome = err.status === 429 || err.status >= 500 ? 'error' : 'refused';
      return {
        result: {
          file,
          message_type: typeOf(),
          outcome,
          status: err.status,
          violations: [...err.violations],
          ...(outcome === 'error' ? { error: err.message } : {}),
          duration_ms: elapsed(),
        },
        message,
      };
    }
    return {
      result: { file, message_type: typeOf(), outcome: 'error', status: null, violations: [], error: (err as Error).message, duration_ms: elapsed() },
      message,
    };
  }
}

function table(results: readonly FileResult[]): string {
  const rows = results.map((r) => {
    const first = r.violations[0];
    const verdict =
      r.outcome === 'refused'
        ? `refused ${r.status} ${first ? `${first.rule}${first.path ? ` ${first.path}` : ''}` : ''}${r.violations.length > 1 ? ` (+${r.violations.length - 1})` : ''}`
        : r.outcome === 'error'
          ? `not checked: ${r.error ?? ''}`
          : r.outcome;
    return [r.file, r.message_type ?? '-', verdict.trim()];
  });
  const widths = [0, 1].map((i) => Math.max(4, ...rows.map((row) => (row[i] as string).length)));
  const line = (cells: string[]) =>
    `${(cells[0] as string).padEnd(widths[0] as number)}  ${(cells[1] as string).padEnd(widths[1] as number)}  ${cells[2]}`.trimEnd();
  const count = (outcome: FileResult['outcome']) => results.filter((r) => r.outcome === outcome).length;
  return [
    line(['FILE', 'TYPE', 'RESULT']),
    ...rows.map(line),
    '',
    `${results.length} checked: ${count('accepted') + count('duplicate')} accepted, ${count('refused')} refused, ${count('error')} not checked`,
    '',
  ].join('\n');
}

function reportOf(results: readonly FileResult[], startedAt: Date, stoppedAt: Date): TestReport {
  return {
    tool: 'busctl validate',
    startedAt,
    stoppedAt,
    cases: results.map((r): ReportCase => {
      const first = r.violations[0];
      const passed = r.outcome === 'accepted' || r.outcome === 'duplicate';
      return {
        name: r.file,
        suite: r.message_type ?? 'unknown',
        durationMs: r.duration_ms,
        outcome: passed ? 'passed' : r.outcome === 'refused' ? 'failed' : 'error',
        file: r.file,
        ...(passed ? {} : { message: r.outcome === 'refused' ? `${r.status} ${first?.rule ?? 'refused'}` : (r.error ?? 'not checked') }),
        ...(r.violations.length > 0 && !passed ? { details: r.violations.map(violationLine).join('\n') } : {}),
      };
    }),
  };
}

/** `busctl validate …` (argv after `validate`): the exit code. */
export async function runValidate(argv: readonly string[], env: Readonly<Record<string, string | undefined>>, io: ValidateIo): Promise<number> {
  let options: Options;
  let files: string[];
  try {
    const parsed = optionsFrom(argv, env);
    if (parsed === 'help') {
      io.stdout(VALIDATE_HELP);
      return 0;
    }
    options = parsed;
    files = await filesOf(io, options.paths);
    if (files.length === 0) throw new UsageError(`no *.json file in ${options.paths.join(', ')}`);
  } catch (err) {
    if (!isUsageError(err)) throw err;
    io.stderr(`busctl: ${(err as Error).message}\n\n${VALIDATE_HELP}`);
    return 2;
  }

  const producer = producerFor(options, io);
  const stories = options.ordered ? new OrderedStories() : undefined;
  const startedAt = io.now();
  const results: FileResult[] = [];
  try {
    for (const file of files) {
      const { result, message } = await check(producer, io, file);
      results.push(stories ? stories.judge(result, message) : result);
    }
  } catch (err) {
    if (!(err instanceof TokenRequestError)) throw err;
    io.stderr(tokenRefusal(err, options.busUrl));
    return 1;
  }
  const stoppedAt = io.now();

  io.stdout(options.json ? `${JSON.stringify(results, null, 2)}\n` : table(results));
  const report = reportOf(results, startedAt, stoppedAt);
  try {
    if (options.junit) await io.writeFile(options.junit, junitXml(report));
    if (options.ctrf) await io.writeFile(options.ctrf, `${JSON.stringify(ctrfJson(report), null, 2)}\n`);
  } catch (err) {
    io.stderr(`busctl: cannot write the report: ${(err as Error).message}\n`);
    return 1;
  }
  return results.every((r) => r.outcome === 'accepted' || r.outcome === 'duplicate') ? 0 : 1;
}
