// The example story (schemas/som/1.0/examples, numbered in publishing order) made publishable again by
// one producer:
//
//   node deploy/local/example-story.js [correlation_id] > story.ndjson     # one message per line
//
// The examples as they are can be published once per workspace, by an app allowed their system_ids.
// Here every message gets
//   - one fresh correlation_id (the argument, else `story-<random>`): a correlation id holds one telling;
//   - fresh message_ids, with the references between them (skill.warning.raised's trigger,
//     system.audit's subject) following: a message id is accepted once per workspace;
//   - system_id $BUS_SYSTEM_ID (the demo app's, in .local/demo.env): an app publishes only for the
//     system ids it is allowed.
// `npm run demo` (deploy/local/demo.js) publishes the same story.
'use strict';

const { randomBytes, randomUUID } = require('node:crypto');
const { som } = require('@bus/schemas');

/** The example story, in publishing order, as the app of `systemId` may publish it under `correlationId`. */
function exampleStory({ correlationId, systemId }) {
  const exampleCorrelationId = som.story[0].correlation_id;
  const newIds = new Map(som.story.map((message) => [message.message_id, randomUUID()]));
  // Every string that is an example's message_id or the examples' correlation_id: the envelope's own
  // and those inside references alike.
  const renamed = (value) => {
    if (typeof value === 'string') return newIds.get(value) ?? (value === exampleCorrelationId ? correlationId : value);
    if (Array.isArray(value)) return value.map(renamed);
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, renamed(inner)]));
    return value;
  };
  return som.story.map((message) => ({ ...renamed(message), system_id: systemId }));
}

/** A correlation id no earlier run used. */
function freshCorrelationId(prefix = 'story') {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

if (require.main === module) {
  const systemId = process.env.BUS_SYSTEM_ID;
  if (!systemId) {
    process.stderr.write('example-story.js: BUS_SYSTEM_ID is not set; `npm run up` writes it to .local/demo.env: set -a; . .local/demo.env; set +a\n');
    process.exit(2);
  }
  const correlationId = process.argv[2] ?? freshCorrelationId();
  for (const message of exampleStory({ correlationId, systemId })) process.stdout.write(`${JSON.stringify(message)}\n`);
}

module.exports = { exampleStory, freshCorrelationId };
