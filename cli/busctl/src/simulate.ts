import { parseCommandOptions } from './options';
import { publishStories, type SimulationCounts } from '@bus/client';
import { generateStories, interleaveStories, type GeneratedStory } from '@bus/som';
import { isUsageError, UsageError } from './errors';
import { DEFAULT_BUS_URL, PRODUCER_ENVIRONMENT_HELP, producerConnection, producerFor, runFailure, type ValidateIo } from './validate';

/** What `busctl simulate` uses of the outside world: the bus, the terminal and the clock. */
export type SimulateIo = Pick<ValidateIo, 'fetch' | 'stdout' | 'stderr' | 'sleep' | 'now'>;

const DEFAULT_STORIES = 10;
const DEFAULT_RATE = 5;
const MAX_STORIES = 10_000;
// The highest tier's sustained rate (docs/admin.md): a faster pace could only earn 429s.
const MAX_RATE = 200;
const SEED_RANGE = 2 ** 31;

export const SIMULATE_HELP = `busctl simulate: publish generated SOM stories through a producer connection, as a stand-in for
the real producer, so a consumer team gets valid traffic to receive.

Usage: busctl simulate [--stories <n>] [--rate <r>] [--seed <s>] [--system-id <id>] [--types <t,...>] [--bus-url <url>]

Each story is one correlation id: a telling (telling.started, telling.exposed..., maybe telling.ended),
0-2 links (link.committed, link.gate_changed..., maybe link.withdrawn) and story.context,
system.audit, skill.warning.raised and delivery.media_available anywhere. Messages are drawn from
the SOM 1.0 schemas and made to follow the sequence and conformance rules, so the bus accepts them
all. A story's messages are published in order, one at a time; the stories interleave.

The same seed gives the same messages (ids and correlation ids too; only occurred_at follows the
clock). Publishing a seed again to the same workspace is refused (the ids were used): take another.

Options:
  --stories <n>     how many stories (default ${DEFAULT_STORIES})
  --rate <r>        at most r messages a second (default ${DEFAULT_RATE}; decimals allowed, at most ${MAX_RATE});
                    a 429 is waited out as Retry-After says, and the pace does not catch up after it
  --seed <s>        0..${SEED_RANGE - 1}; default from the clock, printed so the run can be repeated
  --system-id <id>  the envelope's system_id, one the app may publish for (default $BUS_SYSTEM_ID)
  --types <t,...>   only these message types (telling.exposed and telling.ended need telling.started,
                    link.gate_changed and link.withdrawn need link.committed)
  --bus-url <url>   the bus's base URL (default $BUS_BASE_URL, else ${DEFAULT_BUS_URL})
  -h, --help        this help

Environment:
${PRODUCER_ENVIRONMENT_HELP}
  BUS_SYSTEM_ID               the system_id the app may publish for; --system-id overrides it

Exit codes: 0 every message accepted; 1 a message refused or the bus not reached; 2 usage error.
`;

interface Options {
  stories: number;
  rate: number;
  seed: number;
  systemId: string;
  messageTypes?: string[];
  busUrl: string;
  clientId: string;
  clientSecret: string;
}

function wholeNumber(text: string, option: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) throw new UsageError(`${option} must be a whole number from ${min} to ${max}, not '${text}'`);
  return value;
}

function optionsFrom(argv: readonly string[], env: Readonly<Record<string, string | undefined>>, now: Date): Options | 'help' {
  const { values } = parseCommandOptions({
    args: [...argv],
    options: {
      stories: { type: 'string' },
      rate: { type: 'string' },
      seed: { type: 'string' },
      'system-id': { type: 'string' },
      types: { type: 'string' },
      'bus-url': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  const stories = values.stories === undefined ? DEFAULT_STORIES : wholeNumber(values.stories, '--stories', 1, MAX_STORIES);
  const rate = values.rate === undefined ? DEFAULT_RATE : Number(values.rate);
  if (!/^\d+(\.\d+)?$/.test(values.rate ?? '1') || !(rate > 0) || rate > MAX_RATE)
    throw new UsageError(`--rate must be a number of messages a second above 0, at most ${MAX_RATE}, not '${values.rate}'`);
  const seed = values.seed === undefined ? now.getTime() % SEED_RANGE : wholeNumber(values.seed, '--seed', 0, SEED_RANGE - 1);
  const systemId = values['system-id'] ?? env.BUS_SYSTEM_ID;
  if (!systemId) throw new UsageError('BUS_SYSTEM_ID is not set and no --system-id given: the system_id the app may publish for');
  const messageTypes = values.types
    ?.split(',')
    .map((type) => type.trim())
    .filter((type) => type !== '');
  return {
    stories,
    rate,
    seed,
    systemId,
    ...(messageTypes === undefined ? {} : { messageTypes }),
    ...producerConnection(values['bus-url'], env),
  };
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** `busctl simulate …` (argv after `simulate`): the exit code. */
export async function runSimulate(argv: readonly string[], env: Readonly<Record<string, string | undefined>>, io: SimulateIo): Promise<number> {
  let options: Options;
  let stories: GeneratedStory[];
  const startedAt = io.now();
  try {
    const parsed = optionsFrom(argv, env, startedAt);
    if (parsed === 'help') {
      io.stdout(SIMULATE_HELP);
      return 0;
    }
    options = parsed;
    stories = generateStories({
      seed: options.seed,
      stories: options.stories,
      systemId: options.systemId,
      now: startedAt,
      ...(options.messageTypes === undefined ? {} : { messageTypes: options.messageTypes }),
    });
  } catch (err) {
    if (!isUsageError(err) && !(err instanceof RangeError)) throw err;
    io.stderr(`busctl: ${(err as Error).message}\n\n${SIMULATE_HELP}`);
    return 2;
  }

  const order = interleaveStories(stories, options.seed);
  const intervalMs = 1000 / options.rate;
  io.stdout(
    `Simulating ${stories.length} stories, ${order.length} messages (seed ${options.seed}, system_id ${options.systemId}) ` +
      `at most ${options.rate} a second to ${options.busUrl}: about ${seconds((order.length - 1) * intervalMs)}.\n`,
  );

  const publishingFrom = io.now().getTime();
  let count: SimulationCounts;
  try {
    count = await publishStories(producerFor(options, io), stories, order, {
      rate: options.rate,
      sleep: (ms) => io.sleep(ms),
      now: () => io.now(),
      onEvent: (event) => {
        if (event.kind === 'refused') {
          const { error, message } = event;
          const first = error.violations[0];
          io.stdout(
            `refused ${error.status} ${first ? `${first.rule}${first.path ? ` ${first.path}` : ''}: ${first.message}` : ''} ` +
              `(${message.message_type} ${message.message_id} of story ${event.story}, ${message.correlation_id}); the rest of that story is not sent\n`,
          );
          return;
        }
        const { counts } = event;
        io.stdout(
          `story ${event.story} done (${counts.storiesDone}/${stories.length} stories): ${counts.accepted + counts.duplicates + counts.refused}/${order.length} messages sent, ` +
            `${counts.refused} refused\n`,
        );
      },
    });
  } catch (err) {
    const failure = runFailure(err, options.busUrl);
    if (failure === undefined) throw err;
    io.stderr(failure);
    return 1;
  }
  io.stdout(
    `${order.length} messages of ${stories.length} stories: ${count.accepted} accepted, ${count.duplicates} duplicates, ${count.refused} refused, ` +
      `${count.notSent} not sent, ` +
      `in ${seconds(io.now().getTime() - publishingFrom)} (seed ${options.seed}).\n`,
  );
  return count.refused === 0 ? 0 : 1;
}
