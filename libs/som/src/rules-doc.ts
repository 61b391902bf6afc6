import { rulesCatalogue } from './rules';
import type { ViolationSource } from '@bus/contracts';

const SOURCE_ORDER: readonly ViolationSource[] = ['schema', 'conformance', 'sequence', 'policy'];

const SOURCE_INTRO: Readonly<Record<ViolationSource, string>> = {
  schema: 'The body against the JSON Schemas of SOM 1.0 (schemas/som/1.0, described in docs/som.md).',
  conformance:
    'Rules on one message that JSON Schema cannot express. A tolerated one is reported on the 202 under ' +
    '`tolerated`. message.too_large is here because the HTTP layer reports it with source conformance.',
  sequence: 'The message against the story state of its correlation id; docs/som.md draws the state machines.',
  policy:
    'What the app may publish, and the request-level refusals of the gateway. The spec allows only four ' +
    'sources (schema, conformance, sequence, policy), so refusals that are not about SOM content ' +
    '(authentication, tenancy, firewall, limits, idempotency, routing, server errors) use policy.',
};

/** docs/rules.md: the catalogue for people, generated so that it cannot drift from RULES. */
export function renderRulesMarkdown(): string {
  const { som_version: somVersion, rules } = rulesCatalogue();
  const lines = [
    '# Rule catalogue',
    '',
    '<!-- Generated from libs/som/src/rules.ts by `npm run docs:rules -w libs/som`; do not edit by hand. -->',
    '',
    `Every rule id the bus answers with (SOM ${somVersion}); the same list is served as JSON at \`GET /v1/rules\`.`,
    'A refused message gets its violations under `violations`, with the status below. A tolerated rule',
    'never refuses: an accepted message (202) lists it under `tolerated`. Rule ids are stable; the',
    '`message` of a violation is for people and may change.',
  ];
  for (const source of SOURCE_ORDER) {
    lines.push('', `## ${source}`, '', SOURCE_INTRO[source], '', '| Rule | Status | Tolerated | Description |', '|---|---|---|---|');
    for (const { rule, status, tolerated, description } of rules.filter((entry) => entry.source === source)) {
      lines.push(`| \`${rule}\` | ${status} | ${tolerated ? 'yes' : 'no'} | ${description.replaceAll('|', '\\|')} |`);
    }
  }
  return `${lines.join('\n')}\n`;
}
