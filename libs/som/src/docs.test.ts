/**
 * The docs that show this package's data must show the current data: docs/rules.md is generated from
 * RULES, and docs/som.md shows every example. Reading the committed files is the point of these tests,
 * hence the one use of the file system in this package.
 */
// eslint-disable-next-line no-restricted-imports
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderRulesMarkdown } from './rules-doc';
import { MESSAGE_TYPES } from './schema-set';
import { example } from './testing';

const docs = join(__dirname, '..', '..', '..', 'docs');

describe('docs/rules.md', () => {
  it('is what renderRulesMarkdown generates (if not: npm run docs:rules -w libs/som)', () => {
    expect(readFileSync(join(docs, 'rules.md'), 'utf8')).toBe(renderRulesMarkdown());
  });
});

describe('docs/som.md', () => {
  const text = readFileSync(join(docs, 'som.md'), 'utf8');

  it.each(MESSAGE_TYPES)('shows the current example of %s', (type) => {
    expect(text).toContain(['```json', JSON.stringify(example(type), null, 2), '```'].join('\n'));
  });
});
