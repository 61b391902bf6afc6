import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '@bus/testing';

/**
 * The repository explains itself: what its code and docs cite is in the repository. A pointer to a
 * document outside it, to the contract's section numbers, to an issue tracker's numbers or to a work
 * session cannot be followed by someone who has only the repository; docs/api.md and
 * docs/architecture.md are what code and docs cite instead, by anchors that must exist.
 */
const trackedTextFiles = execFileSync('git', ['ls-files', '-z'], { cwd: REPO_ROOT, encoding: 'utf8' })
  .split('\0')
  .filter((file) => /\.(tsx?|js|mjs|cjs|json|md|ya?ml|sh|tpl|txt)$|(^|\/)(Dockerfile|\.ci\/run)$/.test(file))
  .filter((file) => file !== 'package-lock.json' && !file.startsWith('schemas/som/') && !file.startsWith('schemas/skills/'));

const lines = trackedTextFiles.flatMap((file) =>
  readFileSync(path.join(REPO_ROOT, file), 'utf8')
    .split('\n')
    .map((text, i) => ({ where: `${file}:${i + 1}`, file, text })),
);

const ORDINAL =
  '(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|[a-z]+teenth|twentieth|thirtieth|twenty-[a-z]+|thirty-[a-z]+)';
const OUTSIDE = [
  { what: 'a document outside the repository', pattern: /\.\.\/shared\b/ },
  { what: "the contract's or design's section numbers", pattern: /\b(spec|design) ?§|\bspec \d+\.\d/i },
  // An upstream project's issue (kafkajs's, say) is public: its number stays citable.
  { what: 'an issue number of this project', pattern: /(?<!(kafkajs|strimzi|microcks|node|jest)'? )\b[Ii]ssues? #?\d{1,2}\b(?![-\d])/ },
  { what: 'a work session', pattern: new RegExp(`\\b${ORDINAL} session\\b|\\b[Ss]ession \\d+\\b`, 'i') },
];

/** GitHub's anchor of a Markdown heading. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function headingsOf(doc: string): string[] {
  const text = readFileSync(path.join(REPO_ROOT, doc), 'utf8');
  return [...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => (m[1] as string).trim());
}

/** A paragraph's or list item's bold label ("**skaffold on the tier's cluster.**"): cited by name too. */
function labelsOf(doc: string): string[] {
  const text = readFileSync(path.join(REPO_ROOT, doc), 'utf8');
  return [...text.matchAll(/^(?:- )?\*\*([^*]+)\*\*/gm)].map((m) => (m[1] as string).trim());
}

describe('the repository explains itself', () => {
  it('has no line pointing outside it (other documents, section numbers, issue numbers, sessions)', () => {
    const pointers = lines.flatMap(({ where, text }) =>
      OUTSIDE.filter(({ pattern }) => pattern.test(text)).map(({ what }) => `${where} (${what}): ${text.trim().slice(0, 120)}`),
    );
    expect(pointers).toEqual([]);
  });

  it('cites docs by anchors and section names that exist', () => {
    const headings = new Map<string, string[]>();
    const headingsIn = (doc: string): string[] => {
      if (!headings.has(doc)) headings.set(doc, headingsOf(doc));
      return headings.get(doc) as string[];
    };
    const broken: string[] = [];
    for (const { where, text } of lines) {
      // docs/api.md#limits, and the short form "docs/api.md#errors, #limits" that follows it.
      for (const m of text.matchAll(/\b(docs\/[a-z-]+\.md)((?:#[a-z0-9-]+)(?:, #[a-z0-9-]+)*)/g)) {
        const doc = m[1] as string;
        const anchors = new Set(headingsIn(doc).map(anchorOf));
        for (const anchor of (m[2] as string).split(', ').map((a) => a.slice(1))) {
          if (!anchors.has(anchor)) broken.push(`${where}: ${doc}#${anchor}`);
        }
      }
      // docs/benchmarks.md, "Group commit" (or without the comma): a section by (part of) its heading or bold label.
      for (const m of text.matchAll(/\b(docs\/[a-z-]+\.md),? "([^"]+)"/g)) {
        const doc = m[1] as string;
        const cited = (m[2] as string).toLowerCase();
        const sections = [...headingsIn(doc), ...labelsOf(doc)];
        if (!sections.some((section) => section.toLowerCase().includes(cited))) broken.push(`${where}: ${doc} "${m[2]}"`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('keeps docs/benchmarks.md to the current state: at most 700 lines (the lab log is in its git history)', () => {
    expect(readFileSync(path.join(REPO_ROOT, 'docs/benchmarks.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(700);
  });

  it('has docs/architecture.md and docs/api.md, which the README lists', () => {
    const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    for (const doc of ['docs/architecture.md', 'docs/api.md']) {
      expect(trackedTextFiles).toContain(doc);
      expect(readme).toContain(`](${doc})`);
    }
  });
});
