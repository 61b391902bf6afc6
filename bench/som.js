// Benchmark of SOM validation (`npm run bench:som`, after a build of libs/som): validations per second
// on one core (one Node thread; ajv is synchronous) for a typical message of about 2 KB and one of about
// 200 KB, both story.context, the largest payload type. Prints a markdown table for docs/benchmarks.md.
// Not a test: the figures depend on the machine, so nothing here passes or fails.
'use strict';

const { som } = require('@bus/schemas');
const { createSomValidator, parseJsonBody } = require('@bus/som');

const ROUNDS = 5;
const ROUND_MS = 1_000;
const WARM_UP_MS = 1_000;

/** The story.context example grown with more characters and canon facts to at least `bytes`. */
function storyContextOf(bytes) {
  const message = JSON.parse(JSON.stringify(som.examples['story.context']));
  const { characters, canon } = message.payload;
  for (let n = 0; Buffer.byteLength(JSON.stringify(message)) < bytes; n += 1) {
    characters.push({
      character_id: `char-extra-${n}`,
      name: `Villager number ${n} of St Petroc`,
      role: 'minor',
      age_band: '18+',
      traits: ['weathered', 'kind', 'talkative'],
      voice: { voice_id: `voice-extra-${n % 12}`, register: 'informal' },
      relationships: [{ character_id: 'char-fen', kind: 'neighbour' }],
    });
    canon.push({
      fact_id: `fact-extra-${n}`,
      statement: `Villager ${n} keeps a lantern in the window on stormy nights.`,
      authority: 'editor',
      subject: 'characters.traits',
    });
  }
  return message;
}

/** Median operations per second over ROUNDS rounds of about ROUND_MS each, after a warm-up. */
function opsPerSecond(operation) {
  const runFor = (ms) => {
    const until = process.hrtime.bigint() + BigInt(ms) * 1_000_000n;
    const start = process.hrtime.bigint();
    let count = 0;
    let now = start;
    while (now < until) {
      // Check the clock every 16 calls: reading it costs as much as validating a small message.
      for (let i = 0; i < 16; i += 1) operation();
      count += 16;
      now = process.hrtime.bigint();
    }
    return count / (Number(now - start) / 1e9);
  };
  runFor(WARM_UP_MS);
  const rates = Array.from({ length: ROUNDS }, () => runFor(ROUND_MS)).sort((a, b) => a - b);
  return rates[Math.floor(ROUNDS / 2)];
}

function main() {
  const validator = createSomValidator({ now: () => new Date('2026-11-22T10:00:00Z') });
  const cases = [
    ['typical', som.examples['story.context']],
    ['large', storyContextOf(200_000)],
  ];
  console.log(`Node ${process.version}, ${ROUNDS} rounds of ${ROUND_MS} ms, median\n`);
  console.log(
    '| Message | Bytes | validateBytes (parse + validate) /s | validate (parsed) /s | MB/s (validateBytes) | parseJsonBody (I-JSON) /s | JSON.parse (raw baseline) /s | parseJsonBody / JSON.parse |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const [name, message] of cases) {
    const body = Buffer.from(JSON.stringify(message));
    const parsed = JSON.parse(body.toString('utf8'));
    // A benchmark of refusals would measure something else: make sure the message passes.
    const check = validator.validateBytes(body);
    if (!check.ok) throw new Error(`The ${name} message is refused: ${JSON.stringify(check.violations.slice(0, 3))}`);
    const fromBytes = opsPerSecond(() => validator.validateBytes(body));
    const fromParsed = opsPerSecond(() => validator.validate(parsed));
    const megabytes = (fromBytes * body.length) / 1e6;
    // The acceptance contract's parse (UTF-8, JSON, I-JSON) against the raw JSON.parse of the same text.
    const text = body.toString('utf8');
    const strict = opsPerSecond(() => parseJsonBody(body));
    const raw = opsPerSecond(() => JSON.parse(text));
    console.log(
      `| ${name} story.context | ${body.length} | ${Math.round(fromBytes)} | ${Math.round(fromParsed)} | ${megabytes.toFixed(1)} | ${Math.round(strict)} | ${Math.round(raw)} | ${(strict / raw).toFixed(2)} |`,
    );
  }
}

main();
