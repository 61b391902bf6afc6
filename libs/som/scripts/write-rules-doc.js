// Rewrites docs/rules.md from the rule catalogue (libs/som/src/rules.ts); `npm run docs:rules -w libs/som`
// builds the package first. src/docs.test.ts fails while the committed file differs from this output.
'use strict';

const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { renderRulesMarkdown } = require('../dist/index.js');

const target = join(__dirname, '..', '..', '..', 'docs', 'rules.md');
writeFileSync(target, renderRulesMarkdown());
console.log(`Wrote ${target}`);
