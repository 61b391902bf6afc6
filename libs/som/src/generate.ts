/**
 * Valid SOM stories for consumer teams that need traffic without the real producer (busctl simulate).
 * Each message starts as a value of its schemas (schema-arbitrary.ts: envelope and payload, optional
 * fields present or absent at random); a story plan follows the sequence machines (sequence.ts); then
 * small named fix-ups make the story hold what JSON Schema cannot say (conformance.ts) and what the
 * machines read. Pure: the same options give the same messages, ids included, since every random
 * choice is fast-check's, drawn from the seed.
 */
import fc from 'fast-check';
import { som } from '@bus/schemas';
import { canonicalUuid } from './conformance';
import { SOM_ENVELOPE_VERSION, type SomMessage } from './message';
import type { RuleId } from './rules';
import { SchemaArbitraries } from './schema-arbitrary';
import { MESSAGE_TYPES } from './schema-set';
import { familyOf } from './sequence';
import { epochMsOf } from './time';

export interface GenerateOptions {
  /** A 32-bit integer; the same seed (and options) gives the same stories. */
  readonly seed: number;
  /** How many stories (correlation ids). */
  readonly stories: number;
  /** The envelope's system_id: one the publishing app is allowed (policy.system_id_not_allowed otherwise). */
  readonly systemId: string;
  /** Every occurred_at is at or before it, within a week. The ids do not depend on it. */
  readonly now: Date;
  /** The message types to generate; default all. A type whose machine needs another (telling.exposed needs telling.started) needs that one too. */
  readonly messageTypes?: readonly string[];
}

/** One story: the messages of one correlation id, in the order they must be published. */
export interface GeneratedStory {
  readonly correlation_id: string;
  readonly messages: readonly SomMessage[];
}

type Json = Record<string, unknown>;

/** A message being built: `lane` is the family instance it belongs to (the telling, one link, or its own). */
interface Draft {
  readonly type: string;
  readonly lane: number;
  readonly message: Json;
  readonly payload: Json;
}

interface DraftStory {
  /** A UUID drawn for the story, which makes its correlation id unique. */
  readonly key: string;
  readonly messages: readonly Draft[];
}

interface FixContext {
  readonly systemId: string;
  readonly now: Date;
  /** The message_ids given out so far, across stories. */
  readonly messageIds: Set<string>;
}

/** A correction applied after generation, naming the rules it makes the story satisfy. */
interface FixUp {
  readonly name: string;
  readonly satisfies: readonly RuleId[];
  readonly apply: (story: DraftStory, context: FixContext) => void;
}

// Plan bounds: small enough for quick runs, large enough that every type and transition shows up.
const MAX_EXPOSURES = 4;
const MAX_LINKS = 2;
const MAX_GATE_CHANGES = 3;
const MAX_FAMILY_LESS = 4;
const MAX_MESSAGES = 1 + MAX_EXPOSURES + 1 + MAX_LINKS * (1 + MAX_GATE_CHANGES + 1) + MAX_FAMILY_LESS;

const NIL_UUIDS = new Set(['00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff']);
const GATE_STATES = (som.defs['$defs'] as { gate_state: { enum: string[] } }).gate_state.enum;
const SYSTEM_ID = (som.defs['$defs'] as { system_id: { pattern: string; maxLength: number } }).system_id;

/** Which types a story's machines need before a type can be sent validly. */
const NEEDS: Readonly<Record<string, string>> = {
  'telling.exposed': 'telling.started',
  'telling.ended': 'telling.started',
  'link.gate_changed': 'link.committed',
  'link.withdrawn': 'link.committed',
};

/**
 * The types among `permitted` that generated stories can carry: known SOM types whose machine's first
 * message (telling.started for telling.exposed, say) is permitted too. What an app may publish can be
 * narrower than a story needs; these are what remains publishable.
 */
export function generatableTypes(permitted: readonly string[]): string[] {
  return MESSAGE_TYPES.filter((type) => permitted.includes(type) && (NEEDS[type] === undefined || permitted.includes(NEEDS[type])));
}

/** Generates `stories` valid stories; each, published in order from an empty story state, is accepted. */
export function generateStories(options: GenerateOptions): GeneratedStory[] {
  const { seed, stories, systemId, now } = options;
  if (!Number.isInteger(seed) || seed < -(2 ** 31) || seed >= 2 ** 31) throw new RangeError(`seed must be a 32-bit integer, not ${seed}`);
  if (!Number.isInteger(stories) || stories < 0) throw new RangeError(`stories must be a whole number, not ${stories}`);
  if (systemId.length > SYSTEM_ID.maxLength || !new RegExp(SYSTEM_ID.pattern, 'u').test(systemId))
    throw new RangeError(`system_id ${JSON.stringify(systemId)} is not a SOM system_id (a dotted lowercase name such as storyteller.web)`);
  if (Number.isNaN(now.getTime())) throw new RangeError('now is not a date');
  const allowed = allowedTypes(options.messageTypes);

  const schemas = schemaArbitraries(now);
  const envelope = schemas.envelope();
  const payloads = new Map(MESSAGE_TYPES.map((type) => [type, schemas.payload(type)]));
  const story = planOf(allowed).chain((plan) =>
    fc.record({
      key: fc.noBias(fc.uuid({ version: 4 })),
      messages: fc.tuple(
        ...plan.map(({ type, lane }) =>
          fc.tuple(envelope, payloads.get(type) as fc.Arbitrary<Json>).map(([message, payload]): Draft => {
            // The envelope's own fields in schema order; the type and payload are the plan's.
            return { type, lane, payload, message: { ...message, message_type: type, payload } };
          }),
        ),
      ),
    }),
  );
  const [drafts = []] = fc.sample(fc.array(story, { minLength: stories, maxLength: stories }), { seed, numRuns: 1 });

  const context: FixContext = { systemId, now, messageIds: new Set() };
  return drafts.map((draft) => {
    for (const fixUp of FIX_UPS) fixUp.apply(draft, context);
    return {
      correlation_id: String(draft.messages[0]?.message['correlation_id']),
      messages: draft.messages.map(({ message }) => message as unknown as SomMessage),
    };
  });
}

/**
 * One publish order for several stories: each story's messages keep their order, the stories
 * interleave at random (by `seed`), as independent producers' stories would.
 */
export function interleaveStories(stories: readonly GeneratedStory[], seed: number): SomMessage[] {
  const queues = stories.map((story) => [...story.messages]);
  const total = queues.reduce((sum, queue) => sum + queue.length, 0);
  const [picks = []] = fc.sample(fc.array(fc.nat(), { minLength: total, maxLength: total }), { seed, numRuns: 1 });
  return merge(queues, picks);
}

let lastSchemas: { nowMs: number; schemas: SchemaArbitraries } | undefined;

/** The converted schemas for `now`: building them takes a moment, and callers keep asking with the same clock. */
function schemaArbitraries(now: Date): SchemaArbitraries {
  if (lastSchemas?.nowMs !== now.getTime()) lastSchemas = { nowMs: now.getTime(), schemas: new SchemaArbitraries({ now }) };
  return lastSchemas.schemas;
}

function allowedTypes(messageTypes: readonly string[] | undefined): ReadonlySet<string> {
  const allowed = new Set(messageTypes ?? MESSAGE_TYPES);
  for (const type of allowed) {
    if (!MESSAGE_TYPES.includes(type)) throw new RangeError(`${type} is not a SOM 1.0 message type; known: ${MESSAGE_TYPES.join(', ')}`);
    const needed = NEEDS[type];
    if (needed !== undefined && !allowed.has(needed)) throw new RangeError(`${type} cannot be sent without ${needed} before it in its story`);
  }
  if (allowed.size === 0) throw new RangeError('no message types to generate');
  return allowed;
}

/** Takes the head of one non-empty queue per pick, until all are empty. */
function merge<T>(queues: T[][], picks: readonly number[]): T[] {
  const order: T[] = [];
  for (let i = 0; ; i++) {
    const live = queues.filter((queue) => queue.length > 0);
    if (live.length === 0) return order;
    order.push((live[(picks[i] ?? 0) % live.length] as T[]).shift() as T);
  }
}

/**
 * A story's message types in publish order, following the machines (docs/som.md): one telling
 * (started, exposed×k, optionally ended), 0–2 links (committed, gate_changed×k, optionally withdrawn),
 * and family-less types, interleaved at random while each family keeps its order.
 */
function planOf(allowed: ReadonlySet<string>): fc.Arbitrary<Array<{ type: string; lane: number }>> {
  const familyLess = MESSAGE_TYPES.filter((type) => familyOf(type) === null && allowed.has(type));
  const telling = allowed.has('telling.started');
  // A story has at least one message: when the telling is not allowed, something else must be there.
  const minFamilyLess = !telling && familyLess.length > 0 ? 1 : 0;
  const minLinks = !telling && familyLess.length === 0 ? 1 : 0;
  return fc
    .record({
      exposures: fc.integer({ min: 0, max: MAX_EXPOSURES }),
      ended: fc.boolean(),
      links: fc.array(fc.record({ changes: fc.integer({ min: 0, max: MAX_GATE_CHANGES }), withdrawn: fc.boolean() }), {
        minLength: minLinks,
        maxLength: MAX_LINKS,
      }),
      familyLess:
        familyLess.length === 0 ? fc.constant([]) : fc.array(fc.constantFrom(...familyLess), { minLength: minFamilyLess, maxLength: MAX_FAMILY_LESS }),
      picks: fc.array(fc.nat(), { minLength: MAX_MESSAGES, maxLength: MAX_MESSAGES }),
    })
    .map(({ exposures, ended, links, familyLess: extras, picks }) => {
      const repeat = (type: string, times: number) => (allowed.has(type) ? Array.from({ length: times }, () => type) : []);
      const lanes: string[][] = [];
      if (telling) lanes.push(['telling.started', ...repeat('telling.exposed', exposures), ...repeat('telling.ended', ended ? 1 : 0)]);
      if (allowed.has('link.committed'))
        for (const link of links)
          lanes.push(['link.committed', ...repeat('link.gate_changed', link.changes), ...repeat('link.withdrawn', link.withdrawn ? 1 : 0)]);
      for (const type of extras) lanes.push([type]);
      return merge(
        lanes.map((types, lane) => types.map((type) => ({ type, lane }))),
        picks,
      );
    });
}

// --- fix-ups ----------------------------------------------------------------------------------------

const payloadsOf = (story: DraftStory, type: string) => story.messages.filter((draft) => draft.type === type);

/** `id`, or a variant of it that is not in `taken`, still an identifier of at most 128 characters. */
function distinctId(id: string, taken: ReadonlySet<string>): string {
  if (!taken.has(id)) return id;
  for (let n = 2; ; n++) {
    const candidate = `${id.slice(0, 120)}-${n}`;
    if (!taken.has(candidate)) return candidate;
  }
}

/** The next UUID after `id` in its last group, keeping version and variant: a deterministic replacement. */
function nextUuid(id: string): string {
  const last = (BigInt(`0x${id.slice(24)}`) + 1n) % 16n ** 12n;
  return `${id.slice(0, 24)}${last.toString(16).padStart(12, '0')}`;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const FIX_UPS: readonly FixUp[] = [
  {
    name: 'publishing-system',
    satisfies: ['policy.system_id_not_allowed'],
    apply: (story, { systemId }) => story.messages.forEach(({ message }) => (message['system_id'] = systemId)),
  },
  {
    name: 'som-version',
    satisfies: ['conformance.som_version_unsupported'],
    apply: (story) => story.messages.forEach(({ message }) => (message['som_version'] = SOM_ENVELOPE_VERSION)),
  },
  {
    // Sequence rules hold per correlation id: a story must not share its id with another story, nor with
    // an earlier run's, so the story's drawn UUID is part of it.
    name: 'one-correlation-id-per-story',
    satisfies: ['sequence.telling.already_started', 'sequence.link.already_committed', 'sequence.telling.mismatch'],
    apply: (story) => {
      const correlationId = `${String(story.messages[0]?.message['correlation_id']).slice(0, 64)}-${story.key}`;
      story.messages.forEach(({ message }) => (message['correlation_id'] = correlationId));
    },
  },
  {
    name: 'fresh-message-ids',
    satisfies: ['conformance.message_id_not_canonical', 'conformance.message_id_nil', 'idempotency.message_id_reused'],
    apply: (story, { messageIds }) =>
      story.messages.forEach(({ message }) => {
        let id = canonicalUuid(String(message['message_id']));
        while (NIL_UUIDS.has(id) || messageIds.has(id)) id = nextUuid(id);
        messageIds.add(id);
        message['message_id'] = id;
      }),
  },
  {
    // Drawn at random within the week before now; sorted so that the story's clock never runs backwards.
    name: 'occurred-at-in-story-order',
    satisfies: ['conformance.occurred_at_future', 'conformance.occurred_at_far_future'],
    apply: (story, { now }) => {
      const times = story.messages.map(({ message }) => Math.min(epochMsOf(String(message['occurred_at'])), now.getTime())).sort((a, b) => a - b);
      story.messages.forEach(({ message }, i) => (message['occurred_at'] = new Date(times[i] as number).toISOString()));
    },
  },
  {
    // The machine compares both ids of every telling message with those telling.started recorded.
    name: 'one-telling',
    satisfies: ['sequence.telling.mismatch'],
    apply: (story) => {
      const started = payloadsOf(story, 'telling.started')[0]?.payload;
      if (started === undefined) return;
      for (const { payload } of [...payloadsOf(story, 'telling.exposed'), ...payloadsOf(story, 'telling.ended')]) {
        payload['telling_id'] = started['telling_id'];
        payload['story_id'] = started['story_id'];
      }
    },
  },
  {
    // No rule: consumers join a story's messages on story_id, so one story names one.
    name: 'one-story-id',
    satisfies: [],
    apply: (story) => {
      const storyId = payloadsOf(story, 'telling.started')[0]?.payload['story_id'];
      if (storyId === undefined) return;
      for (const { type, payload } of story.messages) {
        if (type === 'story.context' && isObject(payload['story'])) payload['story']['story_id'] = storyId;
        else if (Object.hasOwn(payload, 'story_id')) payload['story_id'] = storyId;
      }
    },
  },
  {
    // Each link lane commits its own link_id, and its later messages name that one.
    name: 'link-ids',
    satisfies: ['sequence.link.already_committed', 'sequence.link.not_committed', 'sequence.link.withdrawn'],
    apply: (story) => {
      const ids = new Map<number, string>();
      for (const { type, lane, payload } of story.messages) {
        if (type === 'link.committed') {
          const id = distinctId(String(payload['link_id']), new Set(ids.values()));
          ids.set(lane, id);
          payload['link_id'] = id;
        } else if (type === 'link.gate_changed' || type === 'link.withdrawn') {
          payload['link_id'] = ids.get(lane);
        }
      }
    },
  },
  {
    // from_state is the gate the link has: gate.state of its commit, then each change's to_state.
    name: 'gate-follows-link',
    satisfies: ['sequence.link.gate_mismatch', 'conformance.gate_unchanged'],
    apply: (story) => {
      const gates = new Map<number, string>();
      for (const { type, lane, payload } of story.messages) {
        if (type === 'link.committed') gates.set(lane, String((payload['gate'] as Json)['state']));
        if (type !== 'link.gate_changed') continue;
        const from = gates.get(lane) as string;
        payload['from_state'] = from;
        if (payload['to_state'] === from) payload['to_state'] = GATE_STATES[(GATE_STATES.indexOf(from) + 1) % GATE_STATES.length];
        gates.set(lane, String(payload['to_state']));
      }
    },
  },
  {
    name: 'link-leaves-its-segment',
    satisfies: ['conformance.self_reference'],
    apply: (story) => {
      for (const { payload } of payloadsOf(story, 'link.committed')) {
        const from = payload['from'] as Json;
        const to = payload['to'] as Json;
        const sameStory = (from['story_id'] ?? payload['story_id']) === (to['story_id'] ?? payload['story_id']);
        if (sameStory && from['segment_id'] === to['segment_id'])
          to['segment_id'] = distinctId(String(to['segment_id']), new Set([String(from['segment_id'])]));
      }
    },
  },
  {
    name: 'not-superseded-by-itself',
    satisfies: ['conformance.self_reference'],
    apply: (story) => {
      for (const { payload } of payloadsOf(story, 'link.withdrawn')) {
        if (payload['superseded_by'] === payload['link_id'])
          payload['superseded_by'] = distinctId(String(payload['link_id']), new Set([String(payload['link_id'])]));
      }
    },
  },
  {
    name: 'story-context-ids-unique',
    satisfies: ['conformance.duplicate_id'],
    apply: (story) => {
      for (const { payload } of payloadsOf(story, 'story.context')) {
        const lists: Array<[unknown, string]> = [
          [(payload['setting'] as Json)['places'], 'place_id'],
          [payload['characters'], 'character_id'],
          [payload['canon'], 'fact_id'],
        ];
        for (const [items, idField] of lists) {
          const taken = new Set<string>();
          for (const item of (items ?? []) as Json[]) {
            const id = distinctId(String(item[idField]), taken);
            taken.add(id);
            item[idField] = id;
          }
        }
      }
    },
  },
  {
    // Each relationship names another character of the payload (the next ones, in turn).
    name: 'relationships-name-characters',
    satisfies: ['conformance.dangling_reference'],
    apply: (story) => {
      for (const { payload } of payloadsOf(story, 'story.context')) {
        const characters = payload['characters'] as Json[];
        characters.forEach((character, i) =>
          ((character['relationships'] ?? []) as Json[]).forEach((relationship, j) => {
            relationship['character_id'] = (characters[(i + j + 1) % characters.length] as Json)['character_id'];
          }),
        );
      }
    },
  },
  {
    name: 'availability-ends-after-it-starts',
    satisfies: ['conformance.time_range_inverted'],
    apply: (story) => {
      for (const { payload } of payloadsOf(story, 'delivery.media_available')) {
        const until = payload['available_until'];
        if (until === undefined) continue;
        const fromMs = epochMsOf(String(payload['available_from']));
        const untilMs = epochMsOf(String(until));
        if (untilMs > fromMs) continue;
        // Swapped when inverted; an empty range gets a second.
        payload['available_from'] = new Date(untilMs).toISOString();
        payload['available_until'] = new Date(untilMs === fromMs ? fromMs + 1000 : fromMs).toISOString();
      }
    },
  },
  {
    // A warning is about the message before it in the story (an audit's subject too), on the story's
    // correlation id; the first message of a story has none before it and keeps its drawn reference.
    name: 'references-in-story',
    satisfies: ['conformance.reference_mismatch', 'conformance.self_reference'],
    apply: (story) => {
      story.messages.forEach(({ type, message, payload }, i) => {
        const field = type === 'skill.warning.raised' ? 'trigger' : type === 'system.audit' ? 'subject' : undefined;
        const ref = field === undefined ? undefined : payload[field];
        if (!isObject(ref)) return;
        const before = story.messages[i - 1];
        if (before !== undefined) {
          ref['message_id'] = before.message['message_id'];
          ref['message_type'] = before.type;
        } else if (canonicalUuid(String(ref['message_id'])) === message['message_id']) {
          ref['message_id'] = nextUuid(String(message['message_id']));
        }
        if (ref['correlation_id'] !== undefined) ref['correlation_id'] = message['correlation_id'];
      });
    },
  },
];
