// The one place that knows where the schema files are. Plain CommonJS on purpose: the JSON files are
// the source, and an entry point that needs no build step lets node, jest and tsc (through index.d.ts)
// all read the very same files; a compiled copy in dist/ could go stale behind a test run.
'use strict';

// The examples are one story, told under one correlation id (a telling of "The Lighthouse Fox"): one
// message per type, each file numbered in the order they are published in. Every one is accepted in
// that order by an app allowed its system_id; docs/som.md and the README's quick start say more.
const story = [
  require('./som/1.0/examples/01-story.context.json'),
  require('./som/1.0/examples/02-link.committed.json'),
  require('./som/1.0/examples/03-telling.started.json'),
  require('./som/1.0/examples/04-delivery.media_available.json'),
  require('./som/1.0/examples/05-link.gate_changed.json'),
  require('./som/1.0/examples/06-telling.exposed.json'),
  require('./som/1.0/examples/07-skill.warning.raised.json'),
  require('./som/1.0/examples/08-telling.ended.json'),
  require('./som/1.0/examples/09-link.withdrawn.json'),
  require('./som/1.0/examples/10-system.audit.json'),
];

const som = {
  defs: require('./som/1.0/defs.json'),
  envelope: require('./som/1.0/envelope.json'),
  // The keys are the message types the bus has schemas for (docs/api.md#health); nothing else lists them.
  payloads: {
    'delivery.media_available': require('./som/1.0/payloads/delivery.media_available.json'),
    'link.committed': require('./som/1.0/payloads/link.committed.json'),
    'link.gate_changed': require('./som/1.0/payloads/link.gate_changed.json'),
    'link.withdrawn': require('./som/1.0/payloads/link.withdrawn.json'),
    'skill.warning.raised': require('./som/1.0/payloads/skill.warning.raised.json'),
    'story.context': require('./som/1.0/payloads/story.context.json'),
    'system.audit': require('./som/1.0/payloads/system.audit.json'),
    'telling.ended': require('./som/1.0/payloads/telling.ended.json'),
    'telling.exposed': require('./som/1.0/payloads/telling.exposed.json'),
    'telling.started': require('./som/1.0/payloads/telling.started.json'),
  },
  story,
  examples: Object.fromEntries(story.map((message) => [message.message_type, message])),
};

// OpenAPI 3.1 documents of the HTTP APIs, served by the services and checked by the tests.
const openapi = {
  bus: require('./openapi/bus.json'),
  catalogue: require('./openapi/catalogue.json'),
  admin: require('./openapi/admin.json'),
  portal: require('./openapi/portal.json'),
};

// The skill library, one entry per carried version (skills/<version>/): the version's facts
// (library.json) and its skills (skills.json). @bus/skills checks the data and derives the rest
// (skill_version, suite, recall_on schemas, topics, field_kinds).
const skills = {
  versions: [{ ...require('./skills/0.2.2/library.json'), skills: require('./skills/0.2.2/skills.json') }],
};

module.exports = { som, openapi, skills };
