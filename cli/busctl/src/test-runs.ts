import { parseCommandOptions } from './options';
import { BusRefusedError, BusTestRuns, BusUnreachableError, runReportFiles, TokenRequestError, type RunReport, type TestRun } from '@bus/client';
import { DURATION_FORM, durationSeconds } from './duration';
import { UsageError } from './errors';
import { PRODUCER_ENVIRONMENT_HELP, producerConnection, tokenRefusal, type ValidateIo } from './validate';

export const RUN_HELP = `busctl run: test runs (a label with a start and an end in the connection's workspace) and their
conformance reports: every publish and refused validate of the window, counts per message type and
rule, and per consumer connection what it received and acked.

Usage:
  busctl run start --label <label> [--duration <d>]
  busctl run stop <run_id>
  busctl run report <run_id> [--junit <file>] [--ctrf <file>] [--json <file>]

Options:
  --label <label>    what the run is (1–200 characters)
  --duration <d>     the run ends by itself after this long unless stopped (default and at most 1d);
                     ${DURATION_FORM}
  --junit <file>     write the report as JUnit XML (one testcase per message; a refusal is a failure)
  --ctrf <file>      write it as CTRF JSON
  --json <file>      write the report as JSON (the API's answer)
  --bus-url <url>    the bus's base URL (default $BUS_BASE_URL)
  -h, --help         this help

Environment (a consumer connection's credentials work as well):
${PRODUCER_ENVIRONMENT_HELP}

Exit codes: 0 done (report: nothing refused); 1 the report lists a refusal, or the bus refused or
could not be reached; 2 usage error.
`;

type Io = Pick<ValidateIo, 'fetch' | 'now' | 'sleep' | 'stdout' | 'stderr' | 'writeFile'>;

const runFields = (run: TestRun): string =>
  [
    `id          ${run.id}`,
    `label       ${run.label}`,
    `state       ${run.state}`,
    `started_at  ${run.started_at}`,
    `ends_at     ${run.ends_at}`,
    `opened_by   ${run.opened_by}`,
    '',
  ].join('\n');

function summary(report: RunReport): string {
  const lines = [
    `run ${report.run.id} (${report.run.label}), ${report.run.state}: ${report.window.from} to ${report.window.to}`,
    `${report.totals.accepted} accepted, ${report.totals.refused} refused${report.truncated ? ` (listing the first ${report.messages_max})` : ''}`,
    '',
    'TYPE  ACCEPTED  REFUSED',
    ...report.by_message_type.map((t) => `${t.message_type}  ${t.accepted}  ${t.refused}`),
  ];
  if (report.by_rule.length > 0) lines.push('', 'RULE  REFUSALS', ...report.by_rule.map((r) => `${r.rule}  ${r.refusals}`));
  const span = (s: { median_ms: number; max_ms: number } | null) => (s ? `${s.median_ms}/${s.max_ms} ms` : '-');
  lines.push(
    '',
    'CONSUMER  ENQUEUED  RECEIVED  ACKED  PUBLISH→RECEIVE (median/max)  RECEIVE→ACK (median/max)',
    ...report.consumers.map((c) => `${c.consumer_id}  ${c.enqueued}  ${c.received}  ${c.acked}  ${span(c.publish_to_receive)}  ${span(c.receive_to_ack)}`),
    '',
  );
  return lines.join('\n');
}

/** `busctl run …` (argv after `run`): the exit code. */
export async function runTestRuns(argv: readonly string[], env: Readonly<Record<string, string | undefined>>, io: Io): Promise<number> {
  let action: () => Promise<number>;
  let busUrl: string;
  try {
    const { values, positionals } = parseCommandOptions({
      args: [...argv],
      options: {
        label: { type: 'string' },
        duration: { type: 'string' },
        junit: { type: 'string' },
        ctrf: { type: 'string' },
        json: { type: 'string' },
        'bus-url': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
      allowNegative: false,
    });
    if (values.help || positionals.length === 0) {
      io.stdout(RUN_HELP);
      return values.help ? 0 : 2;
    }
    const [command, runId, ...rest] = positionals;
    if (rest.length > 0) throw new UsageError(`unexpected argument '${rest[0]}'`);
    const connection = producerConnection(values['bus-url'], env);
    busUrl = connection.busUrl;
    const runs = new BusTestRuns({
      baseUrl: connection.busUrl,
      clientId: connection.clientId,
      clientSecret: connection.clientSecret,
      fetch: io.fetch,
      now: () => io.now(),
      pause: (ms) => io.sleep(ms),
    });
    const print = (run: TestRun) => io.stdout(runFields(run));
    if (command === 'start') {
      if (!values.label) throw new UsageError('--label is required');
      const duration = values.duration === undefined ? undefined : durationSeconds(values.duration);
      if (values.duration !== undefined && (duration === undefined || duration < 1 || duration > 86_400))
        throw new UsageError(`--duration must be ${DURATION_FORM}, at most 1d`);
      action = async () => (print(await runs.start(values.label as string, duration)), 0);
    } else if (command === 'stop' || command === 'report') {
      if (!runId) throw new UsageError(`busctl run ${command} needs the run's id`);
      action =
        command === 'stop'
          ? async () => (print(await runs.stop(runId)), 0)
          : async () => {
              const report = await runs.report(runId);
              const files = runReportFiles(report);
              if (values.junit) await io.writeFile(values.junit, files.junit);
              if (values.ctrf) await io.writeFile(values.ctrf, files.ctrf);
              if (values.json) await io.writeFile(values.json, `${JSON.stringify(report, null, 2)}\n`);
              io.stdout(summary(report));
              return report.totals.refused === 0 ? 0 : 1;
            };
    } else throw new UsageError(`unknown command 'run ${command}' (start, stop, report)`);
  } catch (err) {
    if (!(err instanceof UsageError) && !(err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) throw err;
    io.stderr(`busctl: ${(err as Error).message}\n\n${RUN_HELP}`);
    return 2;
  }
  try {
    return await action();
  } catch (err) {
    if (err instanceof TokenRequestError) io.stderr(tokenRefusal(err, busUrl));
    else if (err instanceof BusRefusedError) io.stderr(`busctl: the bus refused: ${err.status} ${err.rule}: ${err.violations[0]?.message ?? ''}\n`);
    else if (err instanceof BusUnreachableError) io.stderr(`busctl: cannot reach the bus: ${err.message}\n`);
    else if ((err as NodeJS.ErrnoException).code !== undefined) io.stderr(`busctl: cannot write the report: ${(err as Error).message}\n`);
    else throw err;
    return 1;
  }
}
