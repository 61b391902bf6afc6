// Rewrites the generated library section of docs/skills.md from the library data (schemas/skills);
// `npm run docs:skills -w libs/skills` builds the package first. src/docs.test.ts fails while the
// committed file differs from this output.
'use strict';

const { readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { loadSkillLibrary, renderLibraryMarkdown, replaceGeneratedSection } = require('../dist/index.js');

const target = join(__dirname, '..', '..', '..', 'docs', 'skills.md');
writeFileSync(target, replaceGeneratedSection(readFileSync(target, 'utf8'), renderLibraryMarkdown(loadSkillLibrary())));
console.log(`Wrote ${target}`);
