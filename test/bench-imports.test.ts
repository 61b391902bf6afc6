import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '@bus/testing';

/**
 * The benches (bench/*.js, plain JavaScript run by `npm run bench:*`) are outside the compiler's reach:
 * a name a package stops exporting would only show when someone next runs one. Every name they take
 * from a workspace package is one it exports (the built dist/, as the benches load it).
 */
describe('the benches', () => {
  const bench = path.join(REPO_ROOT, 'bench');
  const files = readdirSync(bench).filter((f) => f.endsWith('.js'));

  it.each(files)('%s takes only names the workspace packages export', (file) => {
    const text = readFileSync(path.join(bench, file), 'utf8');
    const missing: string[] = [];
    for (const [, names = '', pkg = ''] of text.matchAll(/const \{([^}]+)\} = require\('(@bus\/[a-z-]+)'\)/g)) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the benches load packages this way
      const exported = require(pkg) as Record<string, unknown>;
      for (const name of names.split(',').map((n) => n.split(':')[0]!.trim())) if (name !== '' && !(name in exported)) missing.push(`${name} from ${pkg}`);
    }
    expect(missing).toEqual([]);
  });
});
