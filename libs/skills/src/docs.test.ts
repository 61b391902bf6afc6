/**
 * The committed files that show this package's data must show the current data: docs/skills.md carries
 * a section generated from the library, and each version's source_commit pins its skills file.
 * Reading the committed files is the point of these tests, hence the file system in this package.
 */
// eslint-disable-next-line no-restricted-imports
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { renderLibraryMarkdown, replaceGeneratedSection } from './docs';
import { loadSkillLibrary } from './library';

const root = join(__dirname, '..', '..', '..');
const library = loadSkillLibrary();

describe('docs/skills.md', () => {
  const text = readFileSync(join(root, 'docs', 'skills.md'), 'utf8');

  it('shows the library as generated from the data (if not: npm run docs:skills -w libs/skills)', () => {
    expect(text).toContain(renderLibraryMarkdown(library));
  });

  it('keeps the prose around the generated section when regenerated', () => {
    expect(replaceGeneratedSection(text, renderLibraryMarkdown(library))).toBe(text);
  });
});

describe('source_commit', () => {
  it.each(library.versions.map((v) => [v.info.version, v.info.source_commit]))(
    'of %s pins its skills file: the git object id of schemas/skills/<version>/skills.json',
    (version, commit) => {
      // A published version never changes; change the data, and this id must change with it.
      const bytes = readFileSync(join(root, 'schemas', 'skills', version, 'skills.json'));
      const id = createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
      expect(commit).toBe(id);
    },
  );
});
