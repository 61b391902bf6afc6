import { BusRefusedError } from './errors';
import type { PublishResult } from './producer';

/** What a simulated producer publishes: one message of a story (a correlation id). */
export interface StoryMessage {
  readonly message_id: string;
  readonly correlation_id: string;
  readonly message_type: string;
}

export interface SimulationCounts {
  accepted: number;
  /** 200 duplicate: a resend after a lost answer, or the same seed published before. */
  duplicates: number;
  refused: number;
  /** The rest of a story after a refusal: it could only meet the sequence rules' refusals. */
  notSent: number;
  storiesDone: number;
}

export type SimulationEvent<M extends StoryMessage> =
  | { kind: 'refused'; message: M; story: number; error: BusRefusedError; counts: Readonly<SimulationCounts> }
  | { kind: 'story_done'; story: number; counts: Readonly<SimulationCounts> };

export interface SimulationOptions<M extends StoryMessage> {
  /** At most this many messages a second. */
  rate: number;
  sleep: (ms: number) => Promise<void>;
  now: () => Date;
  /** Awaited before the next message: a story finished, a message refused. */
  onEvent?: (event: SimulationEvent<M>) => void | Promise<void>;
}

/**
 * At most one message per interval. No credit builds up: after a long wait (a 429's Retry-After, a
 * slow answer) the next message goes at once and the ones after it keep the interval, so a pause
 * is never followed by a burst that would earn the next 429.
 */
class Pacer {
  private nextAt: number | undefined;

  constructor(
    private readonly clock: Pick<SimulationOptions<StoryMessage>, 'sleep' | 'now'>,
    private readonly intervalMs: number,
  ) {}

  async wait(): Promise<void> {
    const now = this.clock.now().getTime();
    const at = Math.max(this.nextAt ?? now, now);
    if (at > now) await this.clock.sleep(at - now);
    this.nextAt = at + this.intervalMs;
  }
}

/**
 * Publishes generated stories as a stand-in producer (busctl simulate, the portal's producer page):
 * `order` is the stories' messages interleaved, each story's in its own order; stories are numbered
 * from 1 as in `stories`. A refused message stops its story (the rest is counted as not sent); any
 * other failure (the bus unreachable, the token refused) ends the run by throwing.
 */
export async function publishStories<M extends StoryMessage>(
  producer: { publish(body: string): Promise<PublishResult> },
  stories: readonly { readonly correlation_id: string; readonly messages: readonly M[] }[],
  order: readonly M[],
  options: SimulationOptions<M>,
): Promise<SimulationCounts> {
  const storyOf = new Map(stories.map((story, i) => [story.correlation_id, { number: i + 1, left: story.messages.length }]));
  const pacer = new Pacer(options, 1000 / options.rate);
  const stopped = new Set<string>();
  const counts: SimulationCounts = { accepted: 0, duplicates: 0, refused: 0, notSent: 0, storiesDone: 0 };
  for (const message of order) {
    const story = storyOf.get(message.correlation_id);
    if (!story) throw new RangeError(`message ${message.message_id} is of no listed story (${message.correlation_id})`);
    story.left--;
    if (stopped.has(message.correlation_id)) {
      counts.notSent++;
    } else {
      await pacer.wait();
      try {
        if ((await producer.publish(JSON.stringify(message))).duplicate) counts.duplicates++;
        else counts.accepted++;
      } catch (err) {
        if (!(err instanceof BusRefusedError)) throw err;
        counts.refused++;
        stopped.add(message.correlation_id);
        await options.onEvent?.({ kind: 'refused', message, story: story.number, error: err, counts: { ...counts } });
      }
    }
    if (story.left === 0) {
      counts.storiesDone++;
      await options.onEvent?.({ kind: 'story_done', story: story.number, counts: { ...counts } });
    }
  }
  return counts;
}
