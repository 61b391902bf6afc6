import { parseCommandOptions } from './options';
import { BusRefusedError } from '@bus/client';
import { isUsageError, UsageError } from './errors';
import { printable } from './render';
import { DEFAULT_BUS_URL, PRODUCER_ENVIRONMENT_HELP, producerConnection, producerFor, runFailure, type ValidateIo } from './validate';

export const STORY_HELP = `busctl story export: what a story exchanged, for a test's evidence: every accepted message of a
correlation id with its exact bytes and acceptance time, and each consumer connection's copy of it
(enqueued, receive count, acked or not), as NDJSON (docs/testing-tools.md#story-export).

Usage: busctl story export [--out <file>] [--bus-url <url>] <correlation_id>

Without --out the NDJSON goes to stdout as the bus sent it; with it, to <file>, and a summary to stdout.

Options:
  --out <file>       write the NDJSON to <file>
  --bus-url <url>    the bus's base URL (default $BUS_BASE_URL, else ${DEFAULT_BUS_URL})
  -h, --help         this help

Environment:
${PRODUCER_ENVIRONMENT_HELP}

Exit codes: 0 exported (a truncated line may say the export's bounds left messages out); 1 refused (an
unknown correlation id: 404 story.unknown), the bus unreachable, the answer cut off or the file not
written; 2 usage error.
`;

interface Options {
  correlationId: string;
  out?: string;
  busUrl: string;
  clientId: string;
  clientSecret: string;
}

function optionsFrom(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): Options | 'help' {
  const { values, positionals } = parseCommandOptions({
    args: [...argv],
    options: { out: { type: 'string' }, 'bus-url': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
  });
  if (values.help) return 'help';
  const [command, correlationId, ...rest] = positionals;
  if (command !== 'export') throw new UsageError(command === undefined ? 'name a story command: export' : `unknown story command '${command}'`);
  if (correlationId === undefined || rest.length > 0) throw new UsageError('name one correlation id');
  if (values.out !== undefined && values.out.trim() === '') throw new UsageError('--out must not be empty');
  return { correlationId, ...(values.out !== undefined ? { out: values.out } : {}), ...producerConnection(values['bus-url'], env) };
}

/** `busctl story …` (argv after `story`): the exit code. */
export async function runStory(argv: readonly string[], env: Readonly<Record<string, string | undefined>>, io: ValidateIo): Promise<number> {
  let options: Options;
  try {
    const parsed = optionsFrom(argv, env);
    if (parsed === 'help') {
      io.stdout(STORY_HELP);
      return 0;
    }
    options = parsed;
  } catch (err) {
    if (!isUsageError(err)) throw err;
    io.stderr(`busctl: ${(err as Error).message}\n\n${STORY_HELP}`);
    return 2;
  }

  let exported;
  try {
    exported = await producerFor(options, io).exportStory(options.correlationId);
  } catch (err) {
    if (err instanceof BusRefusedError) {
      io.stderr(printable(`busctl: the bus refused (${err.message})`) + '\n');
      return 1;
    }
    const failure = runFailure(err, options.busUrl);
    if (failure === undefined) throw err;
    io.stderr(failure);
    return 1;
  }
  // A cut-off answer is still written: what arrived is evidence too, and the exit code says it is partial.
  if (options.out === undefined) io.stdout(exported.ndjson);
  else {
    try {
      await io.writeFile(options.out, exported.ndjson);
    } catch (err) {
      io.stderr(`busctl: cannot write ${options.out}: ${(err as Error).message}\n`);
      return 1;
    }
  }
  if (!exported.complete) {
    io.stderr('busctl: the export was cut off before its end line; run it again\n');
    return 1;
  }
  if (options.out !== undefined) {
    const end: Record<string, unknown> = exported.lines.at(-1) ?? {};
    const truncated = exported.lines.find((l) => l.type === 'truncated');
    io.stdout(
      `story ${printable(options.correlationId)}: ${String(end.messages)} messages, ${String(end.deliveries)} deliveries, ` +
        `${Buffer.byteLength(exported.ndjson)} bytes to ${options.out}${truncated ? ` (truncated: ${String(truncated.reason)})` : ''}\n`,
    );
  }
  return 0;
}
